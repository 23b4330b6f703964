// Typings for mailauth's tag-list parser (lib/parse-dkim-headers.js, CommonJS, untyped): the
// reader mailauth itself applies to DKIM-Signature and ARC fields, so a check done with it sees
// the tags exactly as mailauth will.
declare module 'mailauth/lib/parse-dkim-headers.js' {
  interface TagValue {
    /** `l`, `v`, `t`, `x` (and ARC `i`) are numbers when the text is numeric, else the text. */
    value: string | number;
    comment?: string;
  }
  interface ParsedTags {
    header?: string;
    value?: string;
    [tag: string]: TagValue | string | undefined;
  }
  function parseDkimHeaders(line: Buffer | string): { parsed: ParsedTags; original: Buffer | string };
  export default parseDkimHeaders;
}
