// One configured classifier bound to a BayesStore: tokenise, classify (one getTokens round trip
// per message), and learn with Rspamd's guards. Shared by the bayes module
// (scans, autolearn), the controller's learning endpoints and the command-line tools.
import type { Message } from '../../message/types.js';
import type { BayesClass, BayesLearns, BayesScope, BayesStore, LearnOutcome } from '../../storage/types.js';
import { classifyTokens, verdictOf, type BayesVerdict, type Classification, type ClassifyParams, type ScoreScaling } from './classify.js';
import type { BayesConfig } from './config.js';
import { tokenDigest, tokenizeMessage, tokenValues, type TokenizeOptions, type TokenList } from './tokenize.js';

/** Stable codes of a refused or failed learn; the controller maps them to Rspamd's statuses. */
export type LearnErrorCode =
  | 'LEARN_ALREADY_LEARNED'
  | 'LEARN_TOO_FEW_TOKENS'
  | 'LEARN_TOO_MANY_TOKENS'
  | 'LEARN_CONDITIONS_DENIED'
  | 'LEARN_STORE_UNAVAILABLE'
  | 'LEARN_STORE_FAILED';

/** A scope's learn counts: from the store's cheap read when it has one, else from its totals. */
export function learnsOf(store: BayesStore, scope: BayesScope): Promise<BayesLearns> {
  return store.learns ? store.learns(scope) : store.totals(scope);
}

export class LearnError extends Error {
  readonly code: LearnErrorCode;
  constructor(code: LearnErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'LearnError';
  }
}

export interface LearnRequest {
  cls: BayesClass;
  /** Message-ID without brackets, for the error texts. */
  messageId?: string | undefined;
  /** `Learn-Type: bulk`: skip the probability guard. */
  bulk?: boolean;
  user?: string;
}

/** The principal recipient for per-user statistics: Deliver-To, first SMTP rcpt, first To. */
export function principalUser(deliverTo: string | undefined, rcpt: readonly string[], msg: Message | undefined): string {
  const raw = deliverTo || rcpt[0] || msg?.to[0]?.address || '';
  return raw.replace(/^<|>$/g, '').trim().toLowerCase();
}

export class BayesClassifier {
  readonly config: BayesConfig;
  readonly params: ClassifyParams;
  readonly tokenizeOptions: TokenizeOptions;
  readonly scaling: ScoreScaling;

  constructor(config: BayesConfig) {
    this.config = config;
    const sc = config.score_scaling;
    const common = { fullOdds: config.full_score_odds, power: config.score_power };
    this.scaling = typeof sc === 'string' ? { spam: sc, ham: sc, ...common } : { ...sc, ...common };
    this.params = {
      minLearns: config.min_learns,
      minTokenHits: config.min_token_hits,
      minProbStrength: config.min_prob_strength,
      minTokens: config.min_tokens,
    };
    this.tokenizeOptions = {
      window: config.window,
      metatokens: {
        images: config.classify_images,
        mimeInfo: config.classify_mime_info,
        headers: config.classify_headers,
        urls: config.classify_urls,
        meta: config.classify_meta,
        headerTokens: config.classify_header_tokens,
        htmlTokens: config.classify_html,
      },
    };
  }

  get name(): string {
    return this.config.name;
  }

  tokenize(msg: Message): TokenList {
    return tokenizeMessage(msg, this.tokenizeOptions);
  }

  scope(user: string): BayesScope {
    return { classifier: this.config.name, user: this.config.per_user ? user : '' };
  }

  /** The statfile symbol a probability earns with this classifier's score scaling. */
  verdict(prob: number): BayesVerdict | undefined {
    return verdictOf(prob, this.scaling);
  }

  /** Too few or too many tokens to classify or learn. */
  tokenCountProblem(tokens: TokenList): 'few' | 'many' | undefined {
    const n = tokens.length - (tokens.extensionCount ?? 0);
    if (n < this.config.min_tokens) return 'few';
    if (this.config.max_tokens > 0 && n > this.config.max_tokens) return 'many';
    return undefined;
  }

  /** Classify against the store; undefined when there is not enough data. Store errors propagate. */
  async classify(store: BayesStore, tokens: TokenList, scope: BayesScope): Promise<Classification | undefined> {
    if (this.tokenCountProblem(tokens)) return undefined;
    const c = await (store.getTokenPairs ? store.getTokenPairs(scope, tokens) : store.getTokens(scope, tokenValues(tokens)));
    // Redis reads the learn counts with the tokens; a local store answers the second call at once.
    const learns = c.learns ?? (await learnsOf(store, scope));
    return classifyTokens(tokens, c.spam, c.ham, learns.learnsSpam, learns.learnsHam, this.params);
  }

  /**
   * Learn one message with Rspamd's guards (learn cache, class checks). Resolves with the store's outcome (never
   * 'already_learned': that is a LearnError), once the write is durable.
   */
  async learn(store: BayesStore, tokens: TokenList, req: LearnRequest): Promise<LearnOutcome> {
    const mid = `<${req.messageId ?? 'undef'}>`;
    const problem = this.tokenCountProblem(tokens);
    if (problem === 'few') {
      throw new LearnError('LEARN_TOO_FEW_TOKENS', `${mid} contains less tokens than required for ${this.name} classifier: ${tokens.length - (tokens.extensionCount ?? 0)} < ${this.config.min_tokens}`);
    }
    if (problem === 'many') {
      throw new LearnError('LEARN_TOO_MANY_TOKENS', `${mid} contains more tokens than allowed for ${this.name} classifier: ${tokens.length - (tokens.extensionCount ?? 0)} > ${this.config.max_tokens}`);
    }
    const scope = this.scope(req.user ?? '');
    const digest = tokenDigest(tokens, scope.user);
    try {
      const before = await store.learnedAs(scope, digest);
      if (before === req.cls) throw alreadyLearned(mid, req.cls);
      // A relearn into the other class is always allowed; otherwise refuse to learn what the
      // classifier already places in that class with high confidence (lua_bayes_learn.can_learn).
      if (before === undefined && !req.bulk) {
        const c = await this.classify(store, tokens, scope);
        if (c) {
          const inClass = req.cls === 'spam' ? c.prob : 1 - c.prob;
          if (inClass >= this.config.learn_prob_guard) {
            // Rspamd logs its condition's reason and replies without it; the reason is in the
            // reply here (after the text clients match on), so whoever trains can see why.
            const why = `already in class ${req.cls}; probability ${((inClass - 0.5) * 200).toFixed(2)}%`;
            throw new LearnError('LEARN_CONDITIONS_DENIED', `all learn conditions denied learning ${req.cls} in ${this.name}: ${why}`);
          }
        }
      }
      const outcome = await store.learn(scope, digest, tokenValues(tokens), req.cls);
      if (outcome === 'already_learned') throw alreadyLearned(mid, req.cls);
      return outcome;
    } catch (err) {
      if (err instanceof LearnError) throw err;
      const code = (err as { code?: unknown }).code;
      if (code === 'STORE_UNAVAILABLE') throw new LearnError('LEARN_STORE_UNAVAILABLE', 'Cannot push learned results to the backend: statistics store unavailable (down or not answering in time); retry later', { cause: err });
      throw new LearnError('LEARN_STORE_FAILED', 'Cannot push learned results to the backend', { cause: err });
    }
  }
}

function alreadyLearned(mid: string, cls: BayesClass): LearnError {
  return new LearnError('LEARN_ALREADY_LEARNED', `${mid} has been already learned as ${cls}, ignore it`);
}
