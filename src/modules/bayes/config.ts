// The bayes module's options are the classifier's own (src/stats/config.ts): one schema for the
// module, the learning endpoints and the command-line tools.
export { BayesConfig } from '../../stats/config.js';
