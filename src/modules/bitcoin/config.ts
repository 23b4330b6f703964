import { z } from 'zod';

/** bitcoin module options. */
export const BitcoinConfig = z.strictObject({
  /** Also look for Ethereum addresses (EIP-55 checksummed), reported as ETHEREUM_ADDR. */
  ethereum: z.boolean().default(true),
});
export type BitcoinConfig = z.infer<typeof BitcoinConfig>;
