#!/usr/bin/python3
"""Hostile clients and a relay for the secure-room tests (docs/PROTOCOL.md, version 2 = TLS 1.3
with ALPN p2pm/2). Each prints JSON lines on standard output and exits 0 when the server behaved
as a secure room must, 1 when it did not (the probes), or runs until stopped (relay).

  relay LISTEN_PORT TARGET_HOST TARGET_PORT
      A man in the middle: terminates TLS 1.3 on both sides with its own key (it does not ask
      clients for a certificate) and forwards the bytes. Prints {"event": "listening", "port"},
      then for each connection {"event": "relayed", "client", "client_key", "relay_key",
      "target_key", "client_safety_code", "target_safety_code"} (the two codes differ: that is
      what the safety code is for) or {"event": "relay-failed", "side", "error"}, and
      {"event": "relay-closed", "up", "down", "up_frames", "down_frames"} with the bytes passed
      each way and the types of the first 16 frames each way (the relay reads the frame headers
      of what it forwards, changing nothing: a room-code exchange passes as 7, 8, 9 and still
      fails, since each side's TLS session differs). Runs until stopped.
  rogue-room LISTEN_PORT
      An impostor room that does not know the room code: a TLS 1.3 server with its own key that
      sends HELLO, waits for the member's first frame (a member with a code sends CODE_START),
      then, instead of CODE_REPLY, sends TEXT "hi from the impostor", a PRESENCE list, a whole
      file "evil.txt" (FILE_OFFER, FILE_CHUNK, FILE_END) and a PING. Prints {"event":
      "listening", "port", "key"}, then for each connection {"event": "rogue-closed", "client",
      "first", "after", "closed"}: the types of the member's first frame and of every frame it
      sent afterwards, and whether it closed within --timeout. Runs until stopped. With
      --refuse-with ERROR (e.g. wrong-room-code) it sends only that ERROR after the member's
      first frame, as if the member's code were wrong.
  tls12 HOST PORT
      A TLS 1.2-only client with ALPN p2pm/2 and a certificate: {"refused": true, "error"} when
      the server refused the handshake (exit 0), {"refused": false, "version"} otherwise (exit 1).
  no-alpn HOST PORT
      TLS 1.3 with a certificate but no ALPN: must be refused (no_application_protocol).
  no-cert HOST PORT
      TLS 1.3 with ALPN p2pm/2 but no certificate: must be refused. In TLS 1.3 the client's
      handshake ends before the server has judged it, so this one sends a HELLO frame and
      counts as refused when the server answers with an alert or a close, not with frames.
  plain-hello HOST PORT
      Connects, listens 0.5 s (a version 2 server sends nothing before the client's first byte),
      then sends a plaintext version 1 HELLO and prints every frame that comes back, then
      {"closed": true, "after": seconds} or {"closed": false}. Exit 0 when nothing came before
      the HELLO, the answer was ERROR tls-required (code 14) and the server closed.
  half-hello HOST PORT SECONDS
      Sends the first half of a real TLS 1.3 ClientHello, then stays silent; prints
      {"sent", "of", "closed", "after", "received"} once the server closes or SECONDS pass.
      Exit 0 when the server closed within SECONDS (its handshake timeout is 10 s).

Options: --timeout SECONDS (default 5) bounds every wait of the probes; relay: --bind ADDRESS
(default ::, dual stack) and --identity-dir DIR (default: a new key for this run).
"""
import hashlib
import json
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p2pm  # noqa: E402
from p2pm import Fatal  # noqa: E402


def emit(**fields):
    print(json.dumps(fields), flush=True)


def tcp(host, port, timeout):
    try:
        return socket.create_connection((host, port), timeout=timeout)
    except OSError as error:
        raise Fatal(p2pm.EXIT_UNAVAILABLE, f"cannot connect to {host} port {port}: {error}")


# --- Probes -------------------------------------------------------------------------------------

def probe(options, versions, alpn, with_certificate, then_hello):
    """One TLS client handshake; 0 when the server refused it (what a secure room must do)."""
    identity = p2pm.Identity.ephemeral() if with_certificate else None
    try:
        context = p2pm.tls_context(identity, versions=versions, alpn=alpn)
    finally:
        if identity:
            identity.discard()
    raw = tcp(options.host, options.port, options.timeout)
    tls = context.wrap_socket(raw, server_hostname=None, do_handshake_on_connect=False)
    try:
        tls.do_handshake()
        if then_hello:
            stream = p2pm.FrameStream(tls)
            stream.send(p2pm.hello("intruder", 1), options.timeout)
            got = stream.next(options.timeout)
            if got is None:
                emit(refused=False, version=tls.version(), alpn=tls.selected_alpn_protocol(),
                     note=f"no answer within {options.timeout:g} s")
                return 1
            emit(refused=False, version=tls.version(), alpn=tls.selected_alpn_protocol(),
                 answer=p2pm.decode(got[0], got[2]))
            return 1
    except (ssl.SSLError, OSError, EOFError) as error:
        emit(refused=True, error=str(error))
        return 0
    finally:
        raw.close()
    emit(refused=False, version=tls.version(), alpn=tls.selected_alpn_protocol(), cipher=tls.cipher()[0])
    return 1


def plain_hello(options):
    conn = tcp(options.host, options.port, options.timeout)
    conn.settimeout(0.5)
    try:
        early = conn.recv(65536)
    except socket.timeout:
        early = b""
    emit(sent_before_our_first_byte=len(early))
    stream = p2pm.FrameStream(conn)
    stream.buffer += early
    started = time.monotonic()
    try:
        stream.send(p2pm.hello("plaintext", 0x3F), options.timeout)
    except OSError as error:
        emit(closed=True, after=0, error=str(error))
        return 1
    errors = []
    closed = False
    while time.monotonic() - started < options.timeout:
        try:
            got = stream.next(max(0.0, options.timeout - (time.monotonic() - started)))
        except (EOFError, OSError):
            closed = True
            break
        if got is not None:
            fields = p2pm.decode(got[0], got[2])
            emit(**fields)
            if fields["frame"] == "error":
                errors.append(fields["code"])
    emit(closed=closed, after=round(time.monotonic() - started, 3))
    conn.close()
    return 0 if not early and errors == [14] and closed else 1


def client_hello():
    """The bytes of a real TLS 1.3 ClientHello with ALPN p2pm/2 (from an in-memory handshake)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    machine = p2pm.tls_context(None).wrap_bio(incoming, outgoing, server_side=False)
    try:
        machine.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def half_hello(options):
    hello = client_hello()
    conn = tcp(options.host, options.port, options.timeout)
    half = hello[:len(hello) // 2]
    conn.sendall(half)
    started = time.monotonic()
    received = 0
    closed = False
    while True:
        left = options.seconds - (time.monotonic() - started)
        if left <= 0:
            break
        conn.settimeout(left)
        try:
            data = conn.recv(65536)
        except socket.timeout:
            break
        except OSError:
            closed = True
            break
        if not data:
            closed = True
            break
        received += len(data)
    emit(sent=len(half), of=len(hello), closed=closed, after=round(time.monotonic() - started, 3), received=received)
    conn.close()
    return 0 if closed else 1


# --- Relay --------------------------------------------------------------------------------------

class FrameTypes:
    """Follows the frames in one direction of a relayed stream: the types of the first LIMIT."""
    LIMIT = 16

    def __init__(self):
        self.types = []
        self.header = b""
        self.skip = 0

    def feed(self, data):
        view = memoryview(data)
        while view and len(self.types) < self.LIMIT:
            if self.skip:
                step = min(self.skip, len(view))
                self.skip -= step
                view = view[step:]
                continue
            need = 8 - len(self.header)
            self.header += bytes(view[:need])
            view = view[need:]
            if len(self.header) == 8:
                self.types.append(int.from_bytes(self.header[4:6], "big"))
                self.skip = int.from_bytes(self.header[:4], "big")
                self.header = b""


def forward(client, target, frames):
    """Passes bytes both ways until either side closes, noting frame types in `frames` (one
    FrameTypes per sending socket); (bytes up, bytes down)."""
    other = {client: target, target: client}
    counts = {client: 0, target: 0}
    while True:
        ready = [s for s in other if s.pending()] or select.select(list(other), [], [], 60)[0]
        for sock in ready:
            sock.settimeout(0)
            try:
                data = sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                continue
            except OSError:
                return counts[client], counts[target]
            if not data:
                return counts[client], counts[target]
            other[sock].settimeout(30)
            try:
                other[sock].sendall(data)
            except OSError:
                return counts[client], counts[target]
            counts[sock] += len(data)
            frames[sock].feed(data)


def relay_one(options, identity, raw, address):
    server_context = p2pm.tls_context(identity, server_side=True)
    client_context = p2pm.tls_context(identity)
    raw.settimeout(options.timeout)
    client = target = None
    try:
        try:
            client = server_context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError) as error:
            emit(event="relay-failed", side="client", client=address[0], error=str(error))
            return
        try:
            target = client_context.wrap_socket(tcp(options.target_host, options.target_port, options.timeout),
                                                server_hostname=None)
        except (ssl.SSLError, OSError, Fatal) as error:
            emit(event="relay-failed", side="target", client=address[0], error=str(error))
            return
        emit(event="relayed", client=address[0], client_key=p2pm.peer_key(client), relay_key=identity.key,
             target_key=p2pm.peer_key(target), client_safety_code=p2pm.safety_code(client),
             target_safety_code=p2pm.safety_code(target))
        frames = {client: FrameTypes(), target: FrameTypes()}
        up, down = forward(client, target, frames)
        emit(event="relay-closed", client=address[0], up=up, down=down, up_frames=frames[client].types,
             down_frames=frames[target].types)
    finally:
        for sock in (client, target, raw):
            if sock is not None:
                sock.close()


def relay(options):
    identity = (p2pm.Identity.in_directory(options.identity_dir) if options.identity_dir
                else p2pm.Identity.ephemeral())
    listener = socket.socket(socket.AF_INET6 if ":" in options.bind else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if listener.family == socket.AF_INET6:
        listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        listener.bind((options.bind, options.listen_port))
    except OSError as error:
        raise Fatal(p2pm.EXIT_UNAVAILABLE, f"cannot listen on {options.bind} port {options.listen_port}: {error}")
    listener.listen(64)
    emit(event="listening", port=listener.getsockname()[1], relay_key=identity.key)
    try:
        while True:
            raw, address = listener.accept()
            threading.Thread(target=relay_one, args=(options, identity, raw, address), daemon=True).start()
    finally:
        identity.discard()


def rogue_one(options, identity, raw, address):
    raw.settimeout(options.timeout)
    try:
        tls = p2pm.tls_context(identity, server_side=True).wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError) as error:
        emit(event="rogue-failed", client=address[0], error=str(error))
        raw.close()
        return
    stream = p2pm.FrameStream(tls)
    sent, closed = [], False
    try:
        stream.send(p2pm.hello("room", 63), options.timeout)  # no member keys: PRESENCE is names only
        first = stream.next(options.timeout)
        if options.refuse_with:
            # Instead of CODE_REPLY, an ERROR that a room which has not proved the code cannot back.
            code = {name: code for code, name in p2pm.ERRORS.items()}[options.refuse_with]
            out = p2pm.frame("error", struct.pack(">H", code) + b"the impostor says your code is wrong")
        else:
            data = b"evil\n"
            out = p2pm.frame("text", p2pm.string("room") + p2pm.string("") + "hi from the impostor".encode())
            out += p2pm.frame("presence", struct.pack(">BH", 0, 2) + p2pm.string("room") + p2pm.string("mallory"))
            out += p2pm.frame("file-offer", struct.pack(">IQ", 7, len(data)) + hashlib.sha256(data).digest() + p2pm.string("evil.txt"))
            out += p2pm.frame("file-chunk", struct.pack(">I", 7) + data)
            out += p2pm.frame("file-end", struct.pack(">I", 7))
            out += p2pm.frame("ping", struct.pack(">Q", 42))
        stream.send(out, options.timeout)
        deadline = time.monotonic() + options.timeout
        while time.monotonic() < deadline:
            got = stream.next(0.2)
            if got is not None:
                sent.append(got[0])
    except EOFError:
        closed = True
    except (ssl.SSLError, OSError, ValueError) as error:
        closed = True
        emit(event="rogue-error", client=address[0], error=str(error))
    emit(event="rogue-closed", client=address[0], first=first[0] if first else None, after=sent, closed=closed)
    tls.close()


def rogue_room(options):
    identity = p2pm.Identity.ephemeral()
    listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind(("::", options.listen_port))
    listener.listen(8)
    emit(event="listening", port=listener.getsockname()[1], key=identity.key)
    try:
        while True:
            raw, address = listener.accept()
            threading.Thread(target=rogue_one, args=(options, identity, raw, address), daemon=True).start()
    finally:
        identity.discard()


def parse(arguments):
    parser = p2pm.argument_parser("svc-attack.py", __doc__)
    parser.add_argument("--timeout", type=float, default=5, metavar="SECONDS", help="the longest wait (default: 5)")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=type(parser))
    command = commands.add_parser("relay", help="a man in the middle terminating TLS on both sides")
    command.add_argument("listen_port", type=int)
    command.add_argument("target_host")
    command.add_argument("target_port", type=int)
    command.add_argument("--bind", default="::", help="the address to listen on (default: ::, dual stack)")
    command.add_argument("--identity-dir", metavar="DIR", help="the relay's key (default: a new one)")
    command = commands.add_parser("rogue-room", help="an impostor room that skips the room-code exchange")
    command.add_argument("listen_port", type=int)
    command.add_argument("--refuse-with", choices=sorted(p2pm.ERRORS.values()), metavar="ERROR",
                         help="send ERROR with this code (e.g. wrong-room-code) instead of CODE_REPLY, and nothing else")
    for name, summary in (("tls12", "a TLS 1.2-only client"), ("no-alpn", "TLS 1.3 without ALPN"),
                          ("no-cert", "TLS 1.3 without a client certificate"),
                          ("plain-hello", "a plaintext version 1 HELLO"),
                          ("half-hello", "half a ClientHello, then silence")):
        command = commands.add_parser(name, help=summary)
        command.add_argument("host")
        command.add_argument("port", type=int)
        if name == "half-hello":
            command.add_argument("seconds", type=float)
    return parser.parse_args(arguments)


def main(arguments):
    options = parse(arguments)
    tls13 = (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)
    if options.command == "relay":
        return relay(options)
    if options.command == "rogue-room":
        return rogue_room(options)
    if options.command == "tls12":
        return probe(options, (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2), (p2pm.ALPN,), True, False)
    if options.command == "no-alpn":
        return probe(options, tls13, (), True, False)
    if options.command == "no-cert":
        return probe(options, tls13, (p2pm.ALPN,), False, True)
    if options.command == "plain-hello":
        return plain_hello(options)
    return half_hello(options)


if __name__ == "__main__":
    p2pm.run("svc-attack.py", main)
