// Lua scripts that make a learn atomic with the learn cache (KEYS: meta, S, H, learned, and the
// cache's order zset learned_z; all in one hash-tag slot). Counts never go negative; a count that
// reaches 0 deletes its field so HLEN stays the number of distinct tokens of the class.

/**
 * Lua that reads the comma-separated tokens of ARGV[n] into the table `fields`. Each script takes
 * a message's tokens as one argument: a Redis argument per token (a few hundred a message) cost
 * the client most of a call's CPU to encode (docs/tuning.md, "Bayes lookups on Redis").
 */
function readFields(n: number): string {
  return `local fields = {}
for f in string.gmatch(ARGV[${n}], '[^,]+') do fields[#fields + 1] = f end`;
}

/**
 * ARGV: digest, class ("spam"|"ham"), learn-cache size, the distinct tokens comma-separated; returns "learned" |
 * "relearned" | "already_learned". The cache entry is scored with the scope's revision after the
 * learn; entries more than `size` revisions old are dropped, so at most `size` remain.
 */
export const LEARN_LUA = `
${readFields(4)}
local prev = redis.call('HGET', KEYS[4], ARGV[1])
local cls = ARGV[2]
local size = tonumber(ARGV[3])
if prev == cls then return 'already_learned' end
local tgt, oth, ltgt, loth = KEYS[2], KEYS[3], 'learns_spam', 'learns_ham'
if cls == 'ham' then tgt, oth, ltgt, loth = KEYS[3], KEYS[2], 'learns_ham', 'learns_spam' end
local outcome = 'learned'
if prev then
  outcome = 'relearned'
  for i = 1, #fields do
    local n = tonumber(redis.call('HGET', oth, fields[i]) or '0')
    if n > 1 then redis.call('HINCRBY', oth, fields[i], -1) elseif n == 1 then redis.call('HDEL', oth, fields[i]) end
  end
  if tonumber(redis.call('HGET', KEYS[1], loth) or '0') > 0 then redis.call('HINCRBY', KEYS[1], loth, -1) end
end
for i = 1, #fields do redis.call('HINCRBY', tgt, fields[i], 1) end
redis.call('HINCRBY', KEYS[1], ltgt, 1)
local rev = redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('HSET', KEYS[4], ARGV[1], cls)
-- A cache written before it was bounded has entries the order zset lacks: a few at a time,
-- they are entered as learned just before this learn, so they age out like the others.
if redis.call('HGET', KEYS[1], 'cache_ordered') ~= '1' then
  local scan = redis.call('HSCAN', KEYS[4], redis.call('HGET', KEYS[1], 'cache_cursor') or '0', 'COUNT', 200)
  for i = 1, #scan[2], 2 do redis.call('ZADD', KEYS[5], 'NX', rev - 1, scan[2][i]) end
  if scan[1] == '0' then
    redis.call('HSET', KEYS[1], 'cache_ordered', '1')
    redis.call('HDEL', KEYS[1], 'cache_cursor')
  else
    redis.call('HSET', KEYS[1], 'cache_cursor', scan[1])
  end
end
redis.call('ZADD', KEYS[5], rev, ARGV[1])
local old = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', rev - size)
if #old > 0 then
  for i = 1, #old, 1000 do redis.call('HDEL', KEYS[4], unpack(old, i, math.min(i + 999, #old))) end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', rev - size)
end
return outcome
`;

/** ARGV: digest, the distinct tokens comma-separated; returns 1 when the digest was learned (and is now removed), else 0. */
export const UNLEARN_LUA = `
${readFields(2)}
local prev = redis.call('HGET', KEYS[4], ARGV[1])
if not prev then return 0 end
local src, lsrc = KEYS[2], 'learns_spam'
if prev == 'ham' then src, lsrc = KEYS[3], 'learns_ham' end
for i = 1, #fields do
  local n = tonumber(redis.call('HGET', src, fields[i]) or '0')
  if n > 1 then redis.call('HINCRBY', src, fields[i], -1) elseif n == 1 then redis.call('HDEL', src, fields[i]) end
end
if tonumber(redis.call('HGET', KEYS[1], lsrc) or '0') > 0 then redis.call('HINCRBY', KEYS[1], lsrc, -1) end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
`;

/**
 * KEYS: S, H, meta. ARGV[1]: the tokens, comma-separated; returns the scope's learns_spam and
 * learns_ham (comma-separated), a `|`, the tokens' spam counts, comma-separated (empty for none),
 * a `|`, then their ham counts. One argument and one reply string instead of a field and a reply
 * element per token and class: encoding and decoding those 400 or so pieces a message was most
 * of a scan worker's Redis cost (docs/tuning.md, "Bayes lookups on Redis"); the learn counts in
 * the same reply spare the classification its own request for them.
 */
export const GET_TOKENS_LUA = `
${readFields(1)}
local function counts(key)
  local out = {}
  for i = 1, #fields, 1000 do
    local got = redis.call('HMGET', key, unpack(fields, i, math.min(i + 999, #fields)))
    for j = 1, #got do out[#out + 1] = got[j] or '' end
  end
  return table.concat(out, ',')
end
local learns = redis.call('HMGET', KEYS[3], 'learns_spam', 'learns_ham')
return (learns[1] or '0') .. ',' .. (learns[2] or '0') .. '|' .. counts(KEYS[1]) .. '|' .. counts(KEYS[2])
`;
