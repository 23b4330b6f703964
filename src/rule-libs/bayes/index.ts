// Bayes statistics: tokeniser, classifier and learning, over any BayesStore.
export { BayesConfig, bayesConfig } from './config.js';
export type { AutolearnObject } from './config.js';
export { BayesClassifier, LearnError, principalUser } from './classifier.js';
export type { LearnErrorCode, LearnRequest } from './classifier.js';
export { classifyTokens, combine, invChiSquare, verdictOf, DEFAULT_CLASSIFY_PARAMS, DEFAULT_SCORE_SCALING } from './classify.js';
export type { BayesVerdict, Classification, ClassifyParams, ScalingMode, ScoreScaling } from './classify.js';
export { tokenizeMessage, tokenValues, tokenDigest, DEFAULT_TOKENIZE_OPTIONS } from './tokenize.js';
export type { TokenList, TokenizeOptions } from './tokenize.js';
export { splitWords, WordSink } from './words.js';
export { metatokens } from './metatokens.js';
export { hashWord, toBigInt } from './hash.js';
export { MemoryBayesStore } from './memory-store.js';
