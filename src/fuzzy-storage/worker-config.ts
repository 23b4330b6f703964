// `workers.fuzzy` in mailsift.yaml: the standalone fuzzy storage worker, off by
// default. Keys keep Rspamd's names so a worker-fuzzy.inc translates one to one.
import { z } from 'zod';
import { KeypairConfig } from '../crypto/keypair-schema.js';

export const FuzzyWorkerSchema = z.strictObject({
  /** Run the worker (UDP). */
  enabled: z.boolean().default(false),
  /** `host:port` to bind; Rspamd's port is 11335. */
  bind: z.string().regex(/^(\[[^\]]+\]|[^:\s]+|[0-9a-fA-F:]+):\d{1,5}$/, 'host:port').default('127.0.0.1:11335'),
  /** One keypair or several: accept encrypted requests (clients use the public key). */
  keypair: z.union([KeypairConfig, z.array(KeypairConfig)]).optional(),
  /** Answer plaintext requests with 415 (encryption required). */
  encrypted_only: z.boolean().default(false),
  /** Client addresses or CIDR ranges allowed to add and delete hashes. */
  allow_update: z.array(z.string()).default(['127.0.0.1', '::1']),
  /** Refuse every add and delete. */
  read_only: z.boolean().default(false),
  /**
   * Lifetime of a stored hash in seconds; checks with prob > 0.9 and re-adds extend it. Default:
   * the store's `stores.fuzzy.expire` (2 days), so the two cannot disagree unless asked to.
   */
  expire: z.int().positive().optional(),
  /** Hex digests never reported nor stored. */
  skip_hashes: z.array(z.string()).default([]),
});
export type FuzzyWorkerConfig = z.output<typeof FuzzyWorkerSchema>;
