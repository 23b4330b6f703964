// fuzzy_check options: the schema lives in src/fuzzy/rule-config.ts because the controller's
// learn endpoints read the same rules.
export { FuzzyCheckConfig } from '../../fuzzy/rule-config.js';
