#!/usr/bin/python3
"""A service manager's side of sd_notify, for tests/integration/test_service.sh.
listen SOCKET PORT SECRET OUT: binds SOCKET (a path, or '@name' for an abstract one) as an
  AF_UNIX datagram socket, touches OUT.bound, then writes one line per datagram to OUT
  ("msg " + its fields joined by '|'); the moment READY=1 arrives it calls aria2.getVersion on
  127.0.0.1:PORT and writes "rpc-at-ready ok VERSION" or "rpc-at-ready fail WHY". Ends after
  STOPPING=1, or after 120 s.
call PORT SECRET METHOD [JSON_PARAM...]: one JSON-RPC call; prints the answer's JSON."""
import json, os, socket, sys, time, urllib.request


def call(port, secret, method, *params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                       "params": [f"token:{secret}"] + list(params)}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=body, method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def listen(path, port, secret, out):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + path[1:] if path.startswith("@") else path)
    if not path.startswith("@"):
        os.chmod(path, 0o777)  # the daemon runs as another user, as DynamicUser's would
    open(out + ".bound", "w").close()
    end = time.monotonic() + 120
    with open(out, "w", buffering=1) as f:
        while time.monotonic() < end:
            s.settimeout(max(0.1, end - time.monotonic()))
            try:
                msg = s.recv(4096).decode()
            except socket.timeout:
                break
            fields = msg.strip("\n").split("\n")
            f.write("msg " + "|".join(fields) + "\n")
            if "READY=1" in fields:
                try:
                    v = call(port, secret, "aria2.getVersion")["result"]["version"]
                    f.write(f"rpc-at-ready ok {v}\n")
                except Exception as e:  # the verdict is in the line
                    f.write(f"rpc-at-ready fail {e!r}\n")
            if "STOPPING=1" in fields:
                break


if __name__ == "__main__":
    if sys.argv[1] == "listen":
        listen(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        try:
            print(json.dumps(call(int(sys.argv[2]), sys.argv[3], sys.argv[4], *[json.loads(a) for a in sys.argv[5:]])))
        except OSError as e:  # refused, reset, timed out: the caller's check reports it
            print(json.dumps({"error": repr(e)}))
