// V8 settings for a scanning process, applied when a normal worker starts.
import v8 from 'node:v8';

/**
 * V8 allocates objects from "pretenured" allocation sites (sites whose objects often survived a
 * young collection) straight into the old generation. The scan path's sites get pretenured, even
 * with one scan at a time, though nearly all its objects die within the scan. Our reading of why
 * that costs so much: the dead old objects stay until a full collection, and until then they keep
 * the young objects they point to alive through every young collection. With pretenuring off,
 * young-collection pauses and promoted bytes roughly halve over the development corpus
 * (docs/tuning.md). Process-wide: under `--single` the controller shares the setting.
 */
export function tuneV8ForScanning(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
