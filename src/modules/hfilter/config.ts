import { z } from 'zod';

/** hfilter options (Rspamd conf/modules.d/hfilter.conf defaults). */
export const HfilterConfig = z.strictObject({
  /** HELO: bare/bad IP, dynamic-looking names, FQDN, A/MX resolution. */
  helo_enabled: z.boolean().default(true),
  /** Client host name from the MTA (`Hostname`): unknown, dynamic-looking names. */
  hostname_enabled: z.boolean().default(true),
  /** Envelope sender domain: FQDN, A/MX resolution; bounces. */
  from_enabled: z.boolean().default(true),
  /** A bounce to more than one recipient. */
  rcpt_enabled: z.boolean().default(true),
  /** Message-ID host: FQDN, A/MX resolution (off by default, as in Rspamd). */
  mid_enabled: z.boolean().default(false),
  /** Body that is nothing but links. */
  url_enabled: z.boolean().default(true),
  /** Also check mail from loopback/private addresses. */
  check_local: z.boolean().default(false),
  /** Also check mail from authenticated users. */
  check_authed: z.boolean().default(false),
  /** Resolve A/AAAA/MX of HELO, sender and Message-ID hosts (needs a reachable resolver). */
  dns_enabled: z.boolean().default(true),
});
export type HfilterConfig = z.infer<typeof HfilterConfig>;
