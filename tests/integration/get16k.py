# One plain HTTP/1.1 GET of /files/16384.bin (Host a.test) from an unbound socket: prints the local address the connection left from and the bytes read, so a test sees which interface connect() chose.
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(b"GET /files/16384.bin HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
n = 0
while True:
    d = s.recv(65536)
    if not d:
        break
    n += len(d)
print(s.getsockname()[0], n)
