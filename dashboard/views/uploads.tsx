import { useEffect, useId, useRef, useState } from "preact/hooks";
import type { Mode } from "../enums";
import { subscribeUploads, type UploadItem, uploadFiles } from "../uploads";

/** `Upload video`: a file input for several files, also a drop target, and a progress bar per file. */
export function Uploads(props: { projectId: string; mode: Mode; onFinished: () => void }) {
  const id = useId();
  const [items, setItems] = useState<UploadItem[]>([]);
  const [over, setOver] = useState(false);
  const zone = useRef<HTMLDivElement>(null);
  useEffect(() => subscribeUploads(setItems), []);
  const start = (files: FileList | null) => {
    if (files && files.length > 0) uploadFiles(files, props.projectId, props.mode, props.onFinished);
  };
  // The drop target: the file input beside it is the keyboard's and screen reader's way in.
  useEffect(() => {
    const element = zone.current;
    if (!element) return;
    const over = (event: DragEvent) => {
      event.preventDefault();
      setOver(true);
    };
    const leave = () => setOver(false);
    const drop = (event: DragEvent) => {
      event.preventDefault();
      setOver(false);
      start(event.dataTransfer?.files ?? null);
    };
    element.addEventListener("dragover", over);
    element.addEventListener("dragleave", leave);
    element.addEventListener("drop", drop);
    return () => {
      element.removeEventListener("dragover", over);
      element.removeEventListener("dragleave", leave);
      element.removeEventListener("drop", drop);
    };
  });
  return (
    <section class="upload" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`} class="visually-hidden">
        Uploads
      </h2>
      <div class={`drop${over ? " over" : ""}`} ref={zone}>
        <label for={id}>Upload video</label>
        <input
          id={id}
          type="file"
          accept="video/*"
          multiple
          onChange={(event) => {
            start(event.currentTarget.files);
            event.currentTarget.value = "";
          }}
        />
        <small class="hint">Or drop files here. Choosing the same file again resumes an interrupted upload.</small>
      </div>
      {items.length > 0 && (
        <ul class="uploading">
          {items.map((item) => (
            <li key={item.key}>
              <span class="name">{item.name}</span>
              <progress max={100} value={item.percent} aria-label={`Uploading ${item.name}`} />
              <span class="hint">
                {item.state === "failed"
                  ? `Failed: ${item.error}`
                  : item.state === "done"
                    ? "Uploaded"
                    : `${item.percent} %${item.resumed ? " (resumed)" : ""}`}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
