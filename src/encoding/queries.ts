import type { Db } from "../lib/db";
import { type Swapped, swapInBatch } from "../lib/replace-object";
import { isoTime } from "../lib/time";
import { DEFAULT_SETTINGS, type EncodingDocument } from "./settings";

export type StoredSettings = { document: EncodingDocument; version: number; updatedAt: string };

type Row = { document: string; version: number; updated_at: string };

function toStored(row: Row): StoredSettings {
  return { document: JSON.parse(row.document) as EncodingDocument, version: row.version, updatedAt: row.updated_at };
}

/** The statement that gives a new project the default settings, for the project's insert batch. */
export function insertDefaultsStatement(db: Db, projectId: string, now: number): D1PreparedStatement {
  return db
    .prepare("INSERT INTO encoding_settings (project_id, document, version, updated_at) VALUES (?, ?, 1, ?)")
    .bind(projectId, JSON.stringify(DEFAULT_SETTINGS), isoTime(now));
}

export async function readSettings(db: Db, projectId: string): Promise<StoredSettings | null> {
  const row = await db
    .prepare("SELECT document, version, updated_at FROM encoding_settings WHERE project_id = ?")
    .bind(projectId)
    .first<Row>();
  return row ? toStored(row) : null;
}

/**
 * Merges a patch into the stored document inside one statement (SQLite's json_patch is RFC 7396),
 * so concurrent patches of different keys never overwrite each other. It applies only when the
 * version is one of `expectedVersions` (if given) and, when the patch enables the watermark, when
 * an image is set; null means one of those did not hold.
 */
export async function patchSettings(
  db: Db,
  projectId: string,
  mergePatch: object,
  options: { enablesWatermark: boolean; expectedVersions: number[] | null; now: number },
): Promise<StoredSettings | null> {
  const row = await db
    .prepare(
      `UPDATE encoding_settings
       SET document = json_patch(document, ?1), version = version + 1, updated_at = ?2
       WHERE project_id = ?3
         AND (?4 = 0 OR json_extract(document, '$.watermark.imageKey') IS NOT NULL)
         AND (?5 IS NULL OR version IN (SELECT value FROM json_each(?5)))
       RETURNING document, version, updated_at`,
    )
    .bind(
      JSON.stringify(mergePatch),
      isoTime(options.now),
      projectId,
      options.enablesWatermark ? 1 : 0,
      options.expectedVersions && JSON.stringify(options.expectedVersions),
    )
    .first<Row>();
  return row ? toStored(row) : null;
}

/**
 * Sets or clears the watermark image (clearing also disables the watermark), reading the image it
 * replaces in the same batch. Null when the project has no settings.
 */
export async function setWatermarkImage(
  db: Db,
  projectId: string,
  imageKey: string | null,
  now: number,
): Promise<Swapped<StoredSettings> | null> {
  const swapped = await swapInBatch<Row>(
    db,
    db
      .prepare(
        "SELECT json_extract(document, '$.watermark.imageKey') AS replaced FROM encoding_settings WHERE project_id = ?",
      )
      .bind(projectId),
    db
      .prepare(
        `UPDATE encoding_settings
         SET document = CASE WHEN ?1 IS NULL
               THEN json_set(document, '$.watermark.imageKey', NULL, '$.watermark.enabled', json('false'))
               ELSE json_set(document, '$.watermark.imageKey', ?1) END,
             version = version + 1, updated_at = ?2
         WHERE project_id = ?3
         RETURNING document, version, updated_at`,
      )
      .bind(imageKey, isoTime(now), projectId),
  );
  return swapped && { replaced: swapped.replaced, result: toStored(swapped.result) };
}
