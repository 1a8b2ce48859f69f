import type { ComponentChildren } from "preact";
import type { PageCursor } from "./video-list";

/** A list as it arrives: `Loading…` until it is there, `empty` when it holds nothing, else its items drawn. */
export function Listed<Item>(props: {
  items: readonly Item[] | null;
  empty: ComponentChildren;
  children: (items: readonly Item[]) => ComponentChildren;
}) {
  if (props.items === null) return <p>Loading…</p>;
  if (props.items.length === 0) return <>{props.empty}</>;
  return <>{props.children(props.items)}</>;
}

/** A column of a Table: its heading, and what its cell says of a row. */
export type Column<Row> = {
  heading: string;
  /** A heading read by screen readers only (`Actions`, `Select`); its cells carry no label. */
  hidden?: boolean;
  cell: (row: Row) => ComponentChildren;
  class?: string;
};

/**
 * A table, one row per item and one cell per column, under the list's states (Listed). On a phone
 * the rows become cards and each cell is labelled with its column's heading (`data-label`, which
 * the stylesheet writes before it), unless `cellLabels` is false.
 */
export function Table<Row>(props: {
  class: string;
  caption?: string;
  columns: readonly Column<Row>[];
  rows: readonly Row[] | null;
  rowKey: (row: Row) => string;
  empty?: ComponentChildren;
  cellLabels?: boolean;
}) {
  const labelled = props.cellLabels ?? true;
  return (
    <Listed items={props.rows} empty={props.empty}>
      {(rows) => (
        <table class={props.class}>
          {props.caption && <caption class="visually-hidden">{props.caption}</caption>}
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th key={column.heading} scope="col">
                  {column.hidden ? <span class="visually-hidden">{column.heading}</span> : column.heading}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) => (
                  <td
                    key={column.heading}
                    class={column.class}
                    data-label={labelled && !column.hidden ? column.heading : undefined}
                  >
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Listed>
  );
}

/** `Previous page` and `Next page` of a list read by cursor; `next` is the last answer's `nextCursor`. */
export function Pager(props: { pages: PageCursor; next: string | null; onChange: (pages: PageCursor) => void }) {
  const { pages, next } = props;
  return (
    <div class="pager">
      <button type="button" disabled={!pages.canGoBack} onClick={() => props.onChange(pages.back())}>
        Previous page
      </button>
      <button type="button" disabled={!next} onClick={() => next && props.onChange(pages.forward(next))}>
        Next page
      </button>
    </div>
  );
}
