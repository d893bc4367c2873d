#!/usr/bin/python3
# Writes the DNS answer seeds of corpus/dns/: first byte 0 (A) or 1 (AAAA), then the message.
import os
import struct
import sys

def name(n):
    return b''.join(bytes([len(l)]) + l.encode() for l in n.split('.') if l) + b'\0'

def msg(qname, qtype, answers, rcode=0, flags=0x8180, qd=1):
    hdr = struct.pack('>HHHHHH', 0x1234, flags | rcode, qd, len(answers), 0, 0)
    q = name(qname) + struct.pack('>HH', qtype, 1)
    body = b''.join(owner + struct.pack('>HHIH', t, 1, ttl, len(rd)) + rd for owner, t, ttl, rd in answers)
    return hdr + q + body

PTR = b'\xc0\x0c'  # compression pointer to the question name
A, AAAA, CNAME = 1, 28, 5
def a(ip): return bytes(int(x) for x in ip.split('.'))
def aaaa(words): return struct.pack('>8H', *words)

seeds = {
    'a_one': (0, msg('example.com', A, [(PTR, A, 300, a('93.184.216.34'))])),
    'a_two_ttls': (0, msg('cdn.example', A, [(PTR, A, 60, a('10.0.0.1')), (PTR, A, 3600, a('10.0.0.2'))])),
    'a_ttl_zero': (0, msg('example.com', A, [(PTR, A, 0, a('10.0.0.3')), (PTR, A, 5, a('10.0.0.4'))])),
    'a_ttl_topbit': (0, msg('example.com', A, [(PTR, A, 0x80000001, a('10.0.0.5'))])),
    'a_ttl_huge': (0, msg('example.com', A, [(PTR, A, 0x7fffffff, a('10.0.0.6'))])),
    'a_cname_chain': (0, msg('www.example.com', A, [(PTR, CNAME, 300, name('edge.example.net')),
                                                     (name('edge.example.net'), A, 20, a('192.0.2.7'))])),
    'a_dup': (0, msg('example.com', A, [(PTR, A, 30, a('10.0.0.8'))] * 3)),
    'a_twenty': (0, msg('many.example', A, [(PTR, A, 100 + i, a('10.1.0.%d' % i)) for i in range(20)])),
    'a_nxdomain': (0, msg('nope.example', A, [], rcode=3)),
    'a_nodata': (0, msg('example.com', A, [])),
    'a_servfail': (0, msg('example.com', A, [], rcode=2)),
    'a_truncated': (0, msg('example.com', A, [(PTR, A, 300, a('10.0.0.9'))])[:-3]),
    'a_wrong_type': (0, msg('example.com', A, [(PTR, AAAA, 300, aaaa([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]))])),
    'a_bad_rdlen': (0, msg('example.com', A, [(PTR, A, 300, b'\x0a\x00\x00')])),
    'a_pointer_loop': (0, msg('example.com', A, [(b'\xc0\x1d', A, 300, a('10.0.0.10'))])),
    'aaaa_one': (1, msg('example.com', AAAA, [(PTR, AAAA, 300, aaaa([0x2606, 0x2800, 0x220, 1, 0x248, 0x1893, 0x25c8, 0x1946]))])),
    'aaaa_mapped': (1, msg('example.com', AAAA, [(PTR, AAAA, 60, aaaa([0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001])),
                                                  (PTR, AAAA, 60, aaaa([0x2001, 0xdb8, 0, 0, 0, 0, 0, 2]))])),
    'aaaa_link_local': (1, msg('example.com', AAAA, [(PTR, AAAA, 60, aaaa([0xfe80, 0, 0, 0, 0, 0, 0, 1]))])),
    'aaaa_nodata': (1, msg('v4only.example', AAAA, [])),
    'aaaa_no_question': (1, msg('example.com', AAAA, [], qd=0)),
}

out = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), 'corpus', 'dns')
os.makedirs(out, exist_ok=True)
for fname, (fam, m) in seeds.items():
    with open(os.path.join(out, fname), 'wb') as f:
        f.write(bytes([fam]) + m)
