// The benchmarks' DNS stub (bench/dns-stub.ts) in its own process, over real UDP and TCP: every
// name NXDOMAIN with an SOA of TTL 0, and mailsift's resolver caches none of those answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startDnsStub, type DnsStub } from '../../bench/servers.js';
import { decodeMessage, encodeQuery, RCODE, type SoaData } from '../../src/net/dns-wire.js';
import { DnsResolver } from '../../src/net/index.js';

let stub: DnsStub;
before(async () => { stub = await startDnsStub(); });
after(() => stub.close());

function tcpExchange(port: number, query: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(query.length);
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
    sock.on('error', reject);
    sock.write(Buffer.concat([len, query]));
  });
}

test('dns stub: NXDOMAIN with an SOA of TTL 0 and MINIMUM 0, question echoed (TCP)', async () => {
  const port = Number(stub.address.split(':')[1]);
  const reply = decodeMessage(await tcpExchange(port, encodeQuery(0x1234, '2.0.0.127.zen.spamhaus.org', 'A')));
  assert.equal(reply.id, 0x1234);
  assert.equal(reply.response, true);
  assert.equal(reply.rcode, RCODE.NXDOMAIN);
  assert.deepEqual(reply.questions.map((q) => [q.name.toLowerCase(), q.type]), [['2.0.0.127.zen.spamhaus.org', 'A']]);
  const soa = reply.authorities.find((rr) => rr.type === 'SOA');
  assert.ok(soa, 'an SOA in the authority section');
  assert.equal(soa.ttl, 0);
  assert.equal((soa.data as SoaData).minttl, 0);
});

test('dns stub: the resolver caches none of its answers (every lookup is a query, over UDP)', async () => {
  const r = new DnsResolver({ servers: [stub.address], timeout: 1, retransmits: 0 });
  for (let i = 0; i < 3; i++) {
    await assert.rejects(r.lookup('nothing.example.com', 'TXT'), { code: 'NXDOMAIN' });
    await assert.rejects(r.lookup('\u00e9t\u00e9.example.com', 'A'), { code: 'NXDOMAIN' });
  }
  assert.equal(r.sent, 6, 'SOA TTL 0: no negative answer cached');
  assert.equal(r.cached('nothing.example.com', 'TXT'), undefined);
});
