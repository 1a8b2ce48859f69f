import { useState } from "preact/hooks";
import { api, must, type Video } from "../api";
import { CopyField, copyText, Problem, SelectField } from "../components";
import { embedCode, LINK_LIFETIMES, publicOriginOf } from "../embed";
import { messageOf } from "../errors";
import type { Scope } from "../mode";

/**
 * `Copy embed code` and `Create playback link`
 * (docs/encoding.md#playback-tokens-and-the-embed-page, docs/dashboard.md).
 */
export function Share(props: { video: Video; scope: Scope }) {
  const { video } = props;
  const [code, setCode] = useState<string | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const [lifetime, setLifetime] = useState(3600);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const token = async (expiresIn: number) =>
    must(
      api.POST("/v1/videos/{id}/playback-tokens", {
        params: { path: { id: video.id }, query: props.scope },
        body: { expiresIn },
      }),
    );

  const copyEmbed = async () => {
    setError(null);
    try {
      // A private video plays only under a token: the embed code carries a fresh one.
      const subject = video.visibility === "private" ? (await token(86400)).token : video.id;
      const made = embedCode(publicOriginOf(video), subject, video.title ?? "Video");
      setCode(made);
      setCopied((await copyText(made)) ? "Embed code copied." : "Select the embed code below and copy it.");
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const createLink = async () => {
    setError(null);
    try {
      setLink((await token(lifetime)).hls);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <section class="card">
      <h2>Share</h2>
      <button type="button" onClick={copyEmbed}>
        Copy embed code
      </button>
      {copied && <p role="status">{copied}</p>}
      {code && <CopyField label="Embed code" value={code} />}
      <SelectField
        label="Link lifetime"
        value={String(lifetime)}
        options={LINK_LIFETIMES.map(([label, seconds]) => [String(seconds), label] as const)}
        onChange={(seconds) => setLifetime(Number(seconds))}
      />
      <button type="button" onClick={createLink}>
        Create playback link
      </button>
      {link && (
        <CopyField label="Playback link" value={link} note="An HLS URL: open it in a player such as VLC or Safari." />
      )}
      <Problem message={error} />
    </section>
  );
}
