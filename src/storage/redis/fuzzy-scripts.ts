// Lua scripts on one fuzzy digest hash (KEYS[1]). Field "<flag>" = "value|updated|expires";
// field "sh" = the shingles the digest owns, "slot:value,…". A script touches only its own key,
// so it runs on Cluster; the per-flag counters and shingle keys are updated around it.

/**
 * ARGV: mode ("add" adds weight, "set" replaces), flag, value, now, expires, key TTL (s), shingles ("" = keep).
 * Returns 1 when the (digest, flag) field was created.
 */
export const FUZZY_ADD_LUA = `
local f = ARGV[2]
local cur = redis.call('HGET', KEYS[1], f)
local value, expires = tonumber(ARGV[3]), tonumber(ARGV[5])
if cur and ARGV[1] == 'add' then
  local v, _, e = string.match(cur, '^(-?%d+)|(%d+)|(%d+)$')
  value = value + tonumber(v)
  if tonumber(e) > expires then expires = tonumber(e) end
end
redis.call('HSET', KEYS[1], f, value .. '|' .. ARGV[4] .. '|' .. expires)
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'sh', ARGV[7]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < tonumber(ARGV[6]) then redis.call('EXPIRE', KEYS[1], ARGV[6]) end
if cur then return 0 end
return 1
`;

/**
 * ARGV: mode ("flag" with ARGV[2] = flag, "all", or "expired" with ARGV[2] = now).
 * Returns { removed flags "f1,f2", owned shingles when the digest is now gone else "" }.
 */
export const FUZZY_REMOVE_LUA = `
local all = redis.call('HGETALL', KEYS[1])
local removed, left, sh = {}, 0, ''
for i = 1, #all, 2 do
  local k, v = all[i], all[i + 1]
  if k == 'sh' then
    sh = v
  else
    local drop = false
    if ARGV[1] == 'all' then drop = true
    elseif ARGV[1] == 'flag' then drop = (k == ARGV[2])
    else
      local e = string.match(v, '|(%d+)$')
      drop = tonumber(e) <= tonumber(ARGV[2])
    end
    if drop then
      redis.call('HDEL', KEYS[1], k)
      table.insert(removed, k)
    else
      left = left + 1
    end
  end
end
if left == 0 and #all > 0 then
  redis.call('DEL', KEYS[1])
  return { table.concat(removed, ','), sh }
end
return { table.concat(removed, ','), '' }
`;
