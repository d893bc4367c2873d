#!/usr/bin/python3
"""Socket emulation probe: after its HTTP request, a program inspects and tunes its socket; prints what it sees (identical with and without the shim).

Usage: sockemu.py HOST PORT PATH
"""
import array
import fcntl
import socket
import sys
import termios

host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # before the first write, like curl
local_before = s.getsockname()
s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), host.encode()))
print("peer", s.getpeername())
print("local unchanged", s.getsockname() == local_before)
print("family", s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) == s.family)
print("type", s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE))
print("protocol", s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))
print("nodelay", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
print("nodelay off", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0)
s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
print("keepalive", s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) != 0)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 33)
print("keepidle", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE))
info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
print("tcp_info state established", info[0] == 1)
print("so_error", s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
head = s.recv(5, socket.MSG_PEEK | socket.MSG_WAITALL)
print("peek", head)
buf = array.array("i", [0])
fcntl.ioctl(s.fileno(), termios.FIONREAD, buf, True)
print("fionread positive", buf[0] >= 5)
print("waitall", s.recv(12, socket.MSG_WAITALL))
s.shutdown(socket.SHUT_WR)  # the response still arrives after a half-close
rest = b""
while b"\r\n\r\n" not in rest:
    d = s.recv(4096)
    if not d:
        break
    rest += d
print("after shutdown got header end", b"\r\n\r\n" in rest)
# a program that never set TCP_NODELAY reads it off while the engine's split (which sets it on
# the connection for its own range requests) fetches the answer
s2 = socket.create_connection((host, port), timeout=10)
s2.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), host.encode()))
s2.recv(5, socket.MSG_PEEK | socket.MSG_WAITALL)
print("nodelay as the program left it", s2.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0)
s2.close()
