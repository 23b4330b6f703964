// Attachment-name and content-type tables (Rspamd's mime_types plugin defaults and its
// content-type map, reduced to what matters for mail). Built once at load.

/** Extensions that are dangerous to open, with the MIME_BAD_EXTENSION weight multiplier. */
export const BAD_EXTENSIONS: Record<string, number> = {
  scr: 4, lnk: 4, ace: 4,
  exe: 1,
  jar: 2, com: 2, bat: 2, arj: 2,
  cab: 3,
  // Executable or scriptable types mail providers refuse to deliver.
  ...Object.fromEntries(
    (
      'ade adp chm cmd cpl ins isp js jse lib mde msc msi msp mst nsh pif sct shb sys vb vbe vbs vxd wsc wsh ' +
      'app asp bas cnt csh diagcab fxp gadget grp hlp hpj inf its jnlp ksh mad maf mag mam maq mar mas mat mau ' +
      'mav maw mcf mda mdb mdt mdw mdz msh msh1 msh2 mshxml msh1xml msh2xml msu ops osd pcd pl plg prf prg ' +
      'printerexport ps1 ps1xml ps2 ps2xml psc1 psc2 psd1 psdm1 pst reg scf shs theme url vbp vsmacros vsw ' +
      'webpnp website ws xbap xll xnk'
    )
      .split(' ')
      .map((e) => [e, 2]),
  ),
};

export const ARCHIVE_EXTENSIONS: Record<string, number> = { zip: 1, arj: 1, rar: 1, ace: 1, '7z': 1, cab: 1 };

/** Weight of MIME_BAD_ATTACHMENT for extensions outside the primary table. */
const OTHER_EXTENSIONS_MULT = 0.4;

export interface ExtensionType {
  types: readonly string[];
  mult: number;
}

/** The extensions whose declared type must match exactly (full weight). */
const PRIMARY_TYPES: Record<string, string> = {
  html: 'text/html',
  htm: 'text/html',
  txt: 'text/plain',
  pdf: 'application/pdf',
};

/** Common attachment extensions and the types a sender may legitimately declare for them. */
const COMMON_TYPES: Record<string, string[]> = {
  '7z': ['application/x-7z-compressed'],
  bmp: ['image/bmp'],
  csv: ['application/vnd.ms-excel', 'text/csv', 'text/plain'],
  doc: ['application/msword'],
  docm: ['application/vnd.ms-word.document.macroenabled.12'],
  docx: [
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/msword',
    'application/vnd.ms-word.document.12',
    'application/octet-stream',
  ],
  dll: ['application/x-msdownload'],
  eml: ['message/rfc822'],
  exe: ['application/x-dosexec', 'application/x-msdownload', 'application/x-executable'],
  gif: ['image/gif'],
  gz: ['application/gzip', 'application/x-gzip'],
  hta: ['application/hta'],
  ics: ['text/calendar', 'application/octet-stream'],
  jar: ['application/java-archive'],
  jpe: ['image/jpeg', 'image/pjpeg'],
  jpeg: ['image/jpeg', 'image/pjpeg'],
  jpg: ['image/jpeg', 'image/pjpeg'],
  js: ['application/javascript'],
  json: ['application/json'],
  mp3: ['audio/mpeg'],
  mp4: ['video/mp4'],
  msg: ['application/vnd.ms-outlook'],
  msi: ['application/x-msi', 'application/octet-stream'],
  odp: ['application/vnd.oasis.opendocument.presentation'],
  ods: ['application/vnd.oasis.opendocument.spreadsheet'],
  odt: ['application/vnd.oasis.opendocument.text'],
  png: ['image/png'],
  ppt: ['application/vnd.ms-powerpoint'],
  pptx: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  rar: ['application/x-rar-compressed', 'application/vnd.rar'],
  rtf: ['application/rtf', 'text/rtf'],
  svg: ['image/svg+xml'],
  tar: ['application/x-tar'],
  tif: ['image/tiff'],
  tiff: ['image/tiff'],
  wav: ['audio/wav', 'audio/x-wav'],
  xls: ['application/vnd.ms-excel'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  xml: ['text/xml', 'application/xml'],
  zip: ['application/zip', 'application/x-zip-compressed'],
};

export const EXTENSION_TYPES: ReadonlyMap<string, ExtensionType> = new Map<string, ExtensionType>([
  ...Object.entries(COMMON_TYPES).map(([ext, types]): [string, ExtensionType] => [ext, { types, mult: OTHER_EXTENSIONS_MULT }]),
  ...Object.entries(PRIMARY_TYPES).map(([ext, t]): [string, ExtensionType] => [ext, { types: [t], mult: 1 }]),
]);

/**
 * Content-type classification, Rspamd map values: negative = known good (MIME_GOOD with weight −n),
 * positive = known bad (MIME_BAD), 0 = neutral. Types not listed are judged by classifyType.
 */
export const CONTENT_TYPE_VALUES: Record<string, number> = {
  'text/plain': -1,
  'multipart/alternative': -1,
  'multipart/mixed': -1,
  'multipart/related': -1,
  'multipart/encrypted': -2,
  'multipart/signed': -2,
  'application/pkcs7-mime': -1,
  'application/pkcs7-signature': -1,
  'multipart/appledouble': 2,
  'multipart/byteranges': 2,
  'multipart/example': 2,
  'multipart/form-data': 2,
  'multipart/header-set': 2,
  'multipart/voice-message': 2,
  'multipart/x-mixed-replace': 2,
};

/** Registered top-level media types: subtypes under them count as neutral, others as unknown. */
const KNOWN_TOP_LEVEL = new Set(['application', 'audio', 'image', 'message', 'model', 'text', 'video', 'multipart', 'font']);

/** Map value for a content type, or undefined when unknown (→ MIME_UNKNOWN). */
export function classifyType(ct: string, extra: Record<string, number>): number | undefined {
  const v = extra[ct] ?? CONTENT_TYPE_VALUES[ct];
  if (v !== undefined) return v;
  const slash = ct.indexOf('/');
  if (slash <= 0 || slash === ct.length - 1) return undefined;
  return KNOWN_TOP_LEVEL.has(ct.slice(0, slash)) ? 0 : undefined;
}
