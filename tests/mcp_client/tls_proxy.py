#!/usr/bin/env python3
"""A TLS front for a plain HTTP server, for the tests of the MCP client's
https:// support (tests/mcp/mcp_client_mounts_an_https_server.rs).

Usage: tls_proxy.py CERT KEY BACKEND_PORT

Listens on 127.0.0.1 (a port of its own, printed as the first line on
stdout), ends TLS with CERT and KEY, and pipes each connection's bytes to
127.0.0.1:BACKEND_PORT and back. Runs until killed.
"""
import socket
import ssl
import sys
import threading

cert, key, backend = sys.argv[1], sys.argv[2], int(sys.argv[3])
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(raw):
    try:
        tls = context.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError):
        # A client that refused our certificate: what the tests expect.
        raw.close()
        return
    upstream = socket.create_connection(("127.0.0.1", backend))
    threading.Thread(target=pipe, args=(tls, upstream), daemon=True).start()
    pipe(upstream, tls)


while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
