// The bayes module's options are the classifier's own (src/rule-libs/bayes/config.ts): one schema for the
// module, the learning endpoints and the command-line tools.
export { BayesConfig } from '../../rule-libs/bayes/config.js';
