// Example plugin `subject_words` (docs/plugins.md), plain JavaScript: words in the Subject
// looked up in a map (a file or URL from local.d/subject_words.yaml, or inline words), a
// per-sender counter in the key-value store, a composite, per-task settings, and an endpoint
// that reports the counters.

/** Words of one Subject looked at; a Subject is the sender's to make long. */
const MAX_WORDS = 64;

/** @param {import('../../../src/config/user-plugins.js').PluginApi} api */
export function plugin({ defineModule, z }) {
  const Config = z.strictObject({
    /** Map sources (file path, http(s) URL); the words below are added to them. */
    map: z.array(z.string()).default([]),
    words: z.array(z.string()).default(['lottery', 'winner', 'inheritance']),
    /** How long a sender's counter lives, in seconds. */
    counter_ttl: z.number().int().min(1).default(3600),
  });

  return defineModule({
    name: 'subject_words',
    config: Config,
    symbols: {
      SUBJECT_WORD: { score: 2, group: 'subject_words', description: 'Subject has a listed word' },
      SUBJECT_WORD_REPEAT: { score: 1, group: 'subject_words', description: 'Sender sent listed words before' },
      SUBJECT_WORD_AND_BAYES: { score: 1, group: 'subject_words', description: 'Listed word and Bayes spam' },
    },
    async setup(ctx) {
      const cfg = ctx.config;
      const words = await ctx.maps.add({ url: cfg.map.length ? cfg.map : 'static', data: cfg.words.map((w) => w.toLowerCase()), kind: 'set', description: 'subject words' });
      const kv = ctx.stores?.kv;

      ctx.symbol({
        name: 'SUBJECT_WORD',
        inserts: ['SUBJECT_WORD', 'SUBJECT_WORD_REPEAT'],
        flags: ['coro'],
        // Runs after the MIME checks; a weak dependency only orders.
        deps: [{ name: 'MIME_GOOD', weak: true }],
        async check(task) {
          // Settings may switch it off per task: `{"plugins": {"subject_words": {"off": true}}}`.
          if (task.pluginSettings('subject_words')?.off === true) return;
          const subject = task.message.subject ?? '';
          const hits = subject.toLowerCase().split(/[^\p{L}\p{N}]+/u).slice(0, MAX_WORDS).filter((w) => w && words.has(w));
          if (hits.length === 0) return;
          task.insert('SUBJECT_WORD', 1, [...new Set(hits)]);
          const sender = task.envelopeFrom?.address;
          if (!kv || !sender) return;
          try {
            const n = await kv.incrBy(`subject_words:${sender}`, 1, cfg.counter_ttl * 1000);
            if (n > 1) task.insert('SUBJECT_WORD_REPEAT', 1, [String(n)]);
          } catch (err) {
            // A store that is down is a skipped check, not a failed scan.
            task.log.warn('subject_words: counter unavailable', { error: String(err) });
          }
        },
      });
      ctx.composite({ name: 'SUBJECT_WORD_AND_BAYES', expression: 'SUBJECT_WORD & BAYES_SPAM' });

      // GET /plugins/subject_words/count?sender=a@b (normal password)
      ctx.endpoint('subject_words', 'count', {
        enable: false,
        async handler(_task, conn, params) {
          if (!params.sender) return conn.send_error(400, 'missing sender');
          if (!kv) return conn.send_error(503, 'no key-value store');
          const v = await kv.get(`subject_words:${params.sender}`);
          conn.send_ucl({ sender: params.sender, count: v ? Number(v.toString()) : 0 });
        },
      });
    },
  });
}
