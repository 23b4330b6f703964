// fuzzy_check options: the schema lives in src/rule-libs/fuzzy/rule-config.ts because the controller's
// learn endpoints read the same rules.
export { FuzzyCheckConfig } from '../../rule-libs/fuzzy/rule-config.js';
