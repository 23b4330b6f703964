// Lua scripts that make a learn atomic with the learn cache (KEYS: meta, S, H, learned; all in
// one hash-tag slot). Counts never go negative; a count that reaches 0 deletes its field so HLEN
// stays the number of distinct tokens of the class.

/** ARGV: digest, class ("spam"|"ham"), distinct tokens…; returns "learned" | "relearned" | "already_learned". */
export const LEARN_LUA = `
local prev = redis.call('HGET', KEYS[4], ARGV[1])
local cls = ARGV[2]
if prev == cls then return 'already_learned' end
local tgt, oth, ltgt, loth = KEYS[2], KEYS[3], 'learns_spam', 'learns_ham'
if cls == 'ham' then tgt, oth, ltgt, loth = KEYS[3], KEYS[2], 'learns_ham', 'learns_spam' end
local outcome = 'learned'
if prev then
  outcome = 'relearned'
  for i = 3, #ARGV do
    local n = tonumber(redis.call('HGET', oth, ARGV[i]) or '0')
    if n > 1 then redis.call('HINCRBY', oth, ARGV[i], -1) elseif n == 1 then redis.call('HDEL', oth, ARGV[i]) end
  end
  if tonumber(redis.call('HGET', KEYS[1], loth) or '0') > 0 then redis.call('HINCRBY', KEYS[1], loth, -1) end
end
for i = 3, #ARGV do redis.call('HINCRBY', tgt, ARGV[i], 1) end
redis.call('HINCRBY', KEYS[1], ltgt, 1)
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('HSET', KEYS[4], ARGV[1], cls)
return outcome
`;

/** ARGV: digest, distinct tokens…; returns 1 when the digest was learned (and is now removed), else 0. */
export const UNLEARN_LUA = `
local prev = redis.call('HGET', KEYS[4], ARGV[1])
if not prev then return 0 end
local src, lsrc = KEYS[2], 'learns_spam'
if prev == 'ham' then src, lsrc = KEYS[3], 'learns_ham' end
for i = 2, #ARGV do
  local n = tonumber(redis.call('HGET', src, ARGV[i]) or '0')
  if n > 1 then redis.call('HINCRBY', src, ARGV[i], -1) elseif n == 1 then redis.call('HDEL', src, ARGV[i]) end
end
if tonumber(redis.call('HGET', KEYS[1], lsrc) or '0') > 0 then redis.call('HINCRBY', KEYS[1], lsrc, -1) end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
`;
