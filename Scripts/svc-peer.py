#!/usr/bin/python3
"""A second implementation of the p2pipp protocol (docs/PROTOCOL.md), written from the document
alone: joins a room at HOST PORT (no mDNS), over TLS 1.3 with ALPN p2pm/2 and a client certificate
(protocol version 2), or with --plaintext over plain TCP (version 1). Inside TLS the frames are
exactly those of version 1.

Over TLS the server's key fingerprint (SHA-256 of its DER SubjectPublicKeyInfo, `SHA256:` and
unpadded base64) is compared with --fingerprint (or the key= item of --txt) after the handshake
and before any frame is sent; on a mismatch it sends nothing, closes and exits 77.

Prints one JSON object a line on standard output: {"event": "identity"|"tls"|"received"|"sent"|
"file-sent"|"file-stored"|"closed"|"done", ...}; "received" carries the frame's fields ("frame":
"text", "from", "to", "text", ...). Diagnostics go to standard error.

With --room-code the peer proves the room's code before its HELLO (docs/PROTOCOL.md, *Room codes
and admission*): it waits for the server's HELLO, sends CODE_START, checks the server's tag in
CODE_REPLY, then sends CODE_CONFIRM and its HELLO, and prints {"event": "room-code", "passed"}.
With a room code the server's key need not be known beforehand (--any-key is implied): the
exchange proves it.

Exit status: 0 everything asked for happened; 1 something did not (a refused or failed file, an
ERROR that closed the connection, a wait that timed out); 64 usage; 69 the connection or the TLS
handshake failed (the server refused us or is not TLS 1.3 with p2pm/2); 77 the server presented a
key other than the one expected; nothing was sent; 78 the identity key cannot be used; 79 the room
code did not match (wrong code, or a relay in between). Before the room proved the code (a valid
CODE_REPLY), an ERROR from it is only its refusal, whatever code it claims (it cannot know that
our code is wrong): 75 for too-many-attempts (try later), 76 for any other; and nothing it sends
is shown as its own until then (only the types of its frames, {"unproved": true}).
"""
import hashlib
import json
import os
import queue
import socket
import ssl
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p2pm  # noqa: E402
import p2pm_roomcode  # noqa: E402
from p2pm import Fatal  # noqa: E402

EXIT_WRONG_ROOM_CODE = 79
EXIT_TRY_LATER = 75  # too-many-attempts, as svc-connect
EXIT_CODE_REFUSED = 76  # an ERROR from a room that has not proved the room code

# rooms, files, resuming files (we always accept at 0), files between members, streamed files
# (offers carry a resume tag and FILE_END the SHA-256; --no-streamed-files leaves it out)
CAPABILITIES = 1 | 2 | 4 | 16 | 128
STREAMED_FILES = 128
CHUNK = 64 * 1024
MAX_INCOMING_FILE = 1 << 32  # bytes; larger offers are refused (this is a test tool)
MAX_INCOMING_AT_ONCE = 4  # files arriving at once; more offers are refused


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def printable(text):
    """`text` with every character a terminal could act on written as \\uXXXX."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)


def inbox_name(offered):
    """The offered name reduced to a safe base name, as docs/PROTOCOL.md "Files" describes for the
    characters this tool can tell apart (controls, blanks, separators, backslash)."""
    base = offered.replace("\\", "_").split("/")[-1]
    base = "".join("_" if (not ch.isprintable() or (ch.isspace() and ch != " ")) else ch for ch in base)
    base = base.lstrip(". ").rstrip(" ")
    if base.startswith("-"):
        base = "_" + base
    while len(base.encode()) > 255:
        base = base[:-1]
    return base or "file"


class Incoming:
    def __init__(self, directory, file_id, size, digest, name):
        self.id, self.size, self.digest, self.name = file_id, size, digest, name
        self.directory = directory
        self.temporary = os.path.join(directory, f".svc-peer-{os.getpid()}-{file_id}.part")
        self.file = open(self.temporary, "wb")
        self.hash = hashlib.sha256()
        self.received = 0

    def discard(self):
        self.file.close()
        try:
            os.unlink(self.temporary)
        except FileNotFoundError:
            pass

    def store(self, digest):
        """(status, message) for FILE_RESULT: 0 and the stored name, or 1 on a checksum mismatch
        against `digest` (the offer's, or for a streamed file the one its FILE_END carried)."""
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        if self.received != self.size or self.hash.digest() != digest:
            os.unlink(self.temporary)
            return 1, f"checksum mismatch: got {self.received} bytes with SHA-256 {self.hash.hexdigest()}"
        stem, dot, extension = self.name.rpartition(".") if "." in self.name.lstrip(".") else (self.name, "", "")
        candidate, number = self.name, 1
        while True:
            try:
                os.link(self.temporary, os.path.join(self.directory, candidate))
                break
            except FileExistsError:
                number += 1
                candidate = f"{stem} ({number}){dot}{extension}"
        os.unlink(self.temporary)
        return 0, candidate


class Peer:
    def __init__(self, options, stream, server_side_name=None):
        self.options = options
        self.stream = stream
        self.timeout = options.timeout
        self.welcomed = None
        self.server_name = server_side_name
        self.fatal_error = None
        self.texts = 0
        self.incoming = {}
        self.stored = 0
        self.replies = {}  # our file id -> the latest FILE_ACCEPT / FILE_RESULT fields
        self.failed = False
        self.code_reply = None  # the payload of CODE_REPLY
        self.code_proved = False  # the room's tag in CODE_REPLY checked out
        self.server_capabilities = 0

    # Sending ---------------------------------------------------------------------------------
    def send(self, data):
        self.stream.send(data, self.timeout)

    def send_text(self, text, to=""):
        self.send(p2pm.frame("text", p2pm.string("") + p2pm.string(to) + text.encode("utf-8")))
        emit("sent", frame="text", to=to, text=text)

    # Receiving ---------------------------------------------------------------------------------
    def pump(self, timeout):
        """Handles at most one frame that arrives within `timeout`; False when none came."""
        got = self.stream.next(timeout)
        if got is None:
            return False
        kind, flags, payload = got
        try:
            fields = p2pm.decode(kind, payload)
        except ValueError as error:
            emit("received", frame=p2pm.TYPES.get(kind, f"unknown-0x{kind:04x}"), malformed=str(error))
            return True
        if flags:
            fields["flags"] = flags
        if self.options.room_code and not self.code_proved:
            # A room that has not proved the code may be anyone: nothing it says is shown as its own.
            emit("received", frame=fields["frame"], unproved=True)
        elif fields["frame"] != "file-chunk":
            emit("received", **fields)
        self.handle(fields, payload)
        return True

    def handle(self, fields, payload):
        name = fields["frame"]
        if name == "hello":
            if fields["magic"] != "P2PM" or fields["version"] != p2pm.VERSION:
                raise Fatal(p2pm.EXIT_FAILURE, f"the server's HELLO is not protocol version 1: {fields}")
            self.server_name = fields["name"]
            self.server_capabilities = fields["capabilities"]
        elif name == "welcome":
            if self.options.room_code and self.code_reply is None:
                raise Fatal(p2pm.EXIT_FAILURE, "the room welcomed us without checking the room code")
            self.welcomed = fields["name"]
        elif name == "code-reply":
            if self.code_reply is not None:
                raise Fatal(p2pm.EXIT_FAILURE, "the server sent CODE_REPLY twice")
            self.code_reply = payload
        elif name == "ping":
            self.send(p2pm.frame("pong", struct.pack(">Q", fields["token"])))
        elif name == "text":
            self.texts += 1
        elif name == "error":
            if self.options.room_code and not self.code_proved:
                raise Fatal(EXIT_TRY_LATER if fields["code"] == 17 else EXIT_CODE_REFUSED,
                            f"the room, which has not proved the room code, refused: {fields['name']}: "
                            f"{printable(fields['message'])}")
            if self.welcomed is None or fields["code"] in (3, 6, 7, 8, 10, 11, 13, 14):
                self.fatal_error = fields
        elif name in ("file-accept", "file-result"):
            self.replies[fields["id"]] = fields
        elif name in ("file-offer", "file-offer-from"):
            self.offered(fields)
        elif name == "file-chunk":
            transfer = self.incoming.get(fields["id"])
            if transfer is None:
                return
            data = payload[4:]
            if transfer.received + len(data) > transfer.size:
                del self.incoming[transfer.id]
                transfer.discard()
                self.result(transfer.id, 2, "more data than offered")
                return
            transfer.file.write(data)
            transfer.hash.update(data)
            transfer.received += len(data)
            transfer.last = time.monotonic()
        elif name == "file-end":
            transfer = self.incoming.get(fields["id"])
            if transfer is None:
                return
            # A streamed file's SHA-256 comes here, and only then (docs/PROTOCOL.md, "Files").
            if self.streams() != ("sha256" in fields):
                self.send(p2pm.frame("error", struct.pack(">H", 12) + b"FILE_END with or without a digest against the capabilities"))
                return
            del self.incoming[transfer.id]
            status, message = transfer.store(bytes.fromhex(fields["sha256"]) if self.streams() else transfer.digest)
            self.result(transfer.id, status, message)
            if status == 0:
                self.stored += 1
                emit("file-stored", id=transfer.id, path=os.path.join(transfer.directory, message),
                     size=transfer.size, sha256=transfer.hash.hexdigest())
            else:
                self.failed = True
        elif name == "file-cancel":
            transfer = self.incoming.pop(fields["id"], None)
            if transfer is not None:
                transfer.discard()

    def streams(self):
        """Whether both HELLOs announced streamed files (capability 128)."""
        return bool(self.capabilities() & self.server_capabilities & STREAMED_FILES)

    def capabilities(self):
        return CAPABILITIES & ~(0 if self.options.streamed_files else STREAMED_FILES)

    def result(self, file_id, status, message):
        self.send(p2pm.frame("file-result", struct.pack(">IB", file_id, status) + message.encode("utf-8")))
        emit("sent", frame="file-result", id=file_id, status=status, message=message)

    def offered(self, fields):
        file_id = fields["id"]
        if self.options.inbox is None:
            self.result(file_id, 2, "this peer takes no files (no --inbox)")
        elif fields["size"] > MAX_INCOMING_FILE:
            self.result(file_id, 2, f"files above {MAX_INCOMING_FILE} bytes are refused")
        elif len(self.incoming) >= MAX_INCOMING_AT_ONCE:
            self.result(file_id, 2, f"{MAX_INCOMING_AT_ONCE} files are arriving already; offer it again later")
        elif file_id in self.incoming:
            self.result(file_id, 2, "this id is already arriving")
        else:
            transfer = Incoming(self.options.inbox, file_id, fields["size"], bytes.fromhex(fields["sha256"]),
                                inbox_name(fields["name"]))
            transfer.last = time.monotonic()
            self.incoming[file_id] = transfer
            self.send(p2pm.frame("file-accept", struct.pack(">IQ", file_id, 0)))
            emit("sent", frame="file-accept", id=file_id, offset=0)

    def wait_for(self, condition, what):
        """Handles frames until condition() holds; fails after --timeout seconds without it (for
        files arriving: without data)."""
        deadline = time.monotonic() + self.timeout
        while not condition():
            if self.fatal_error:
                raise Fatal(p2pm.EXIT_FAILURE, f"the server ended the session: {self.fatal_error['name']}: "
                                               f"{self.fatal_error['message']}")
            if self.incoming:
                deadline = max(deadline, max(t.last for t in self.incoming.values()) + self.timeout)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fatal(p2pm.EXIT_FAILURE, f"timed out after {self.timeout:g} s waiting for {what}")
            self.pump(min(left, 0.2))

    # The session ---------------------------------------------------------------------------------
    def join(self):
        if self.options.room_code:
            self.prove_room_code()
        self.send(p2pm.hello(self.options.name, self.capabilities()))
        emit("sent", frame="hello", name=self.options.name, capabilities=self.capabilities())
        self.wait_for(lambda: self.welcomed is not None, "the server's WELCOME")

    def prove_room_code(self):
        """The room-code exchange, as the initiator, between the server's HELLO and ours."""
        self.wait_for(lambda: self.server_name is not None, "the server's HELLO")
        ci, sid = self.options.code_binding
        try:
            exchange = p2pm_roomcode.Initiator(self.options.room_code, ci, sid)
        except p2pm_roomcode.ExchangeFailed as error:
            raise Fatal(p2pm.EXIT_FAILURE, str(error))
        self.send(p2pm.frame("code-start", exchange.share + exchange.ad))
        emit("sent", frame="code-start", share=exchange.share.hex())
        self.wait_for(lambda: self.code_reply is not None, "the server's CODE_REPLY")
        try:
            tag = exchange.finish(self.code_reply)
        except p2pm_roomcode.ExchangeFailed as error:
            code = 16 if error.wrong else 19
            self.send(p2pm.frame("error", struct.pack(">H", code) + str(error).encode("utf-8")))
            emit("room-code", passed=False, reason=str(error))
            raise Fatal(EXIT_WRONG_ROOM_CODE if error.wrong else p2pm.EXIT_FAILURE, str(error))
        self.code_proved = True
        self.send(p2pm.frame("code-confirm", tag))
        emit("room-code", passed=True)

    def send_file(self, file_id, path):
        with open(path, "rb") as file:
            digest = hashlib.sha256()
            streamed = self.streams()
            if streamed:
                # Offered at once by a resume tag (any 32 bytes that stay while the file is
                # unchanged, the change time too); the data is hashed as it is sent, the digest
                # goes with FILE_END.
                info = os.fstat(file.fileno())
                offered = hashlib.sha256(struct.pack(">QQQqq", info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                                                     info.st_ctime_ns)).digest()
                size = info.st_size
            else:
                for block in iter(lambda: file.read(1 << 20), b""):
                    digest.update(block)
                size = file.tell()
                offered = digest.digest()
            name = os.path.basename(path)
            self.send(p2pm.frame("file-offer", struct.pack(">IQ", file_id, size) + offered + p2pm.string(name, 4096)))
            emit("sent", frame="file-offer", id=file_id, size=size, sha256=offered.hex(), name=name, streamed=streamed)
            self.wait_for(lambda: file_id in self.replies, f"an answer to the offer of '{name}'")
            reply = self.replies.pop(file_id)
            if reply["frame"] == "file-accept":
                if reply["offset"] > size:
                    raise Fatal(p2pm.EXIT_FAILURE, f"FILE_ACCEPT offset {reply['offset']} is past the end ({size})")
                file.seek(0)
                if streamed:  # the receiver checks the whole file: the data before the offset too
                    left = reply["offset"]
                    while left:
                        block = file.read(min(left, 1 << 20))
                        if not block:
                            raise Fatal(p2pm.EXIT_FAILURE, f"'{path}' shrank while being sent")
                        digest.update(block)
                        left -= len(block)
                file.seek(reply["offset"])
                for block in iter(lambda: file.read(CHUNK), b""):
                    if streamed:
                        digest.update(block)
                    self.send(p2pm.frame("file-chunk", struct.pack(">I", file_id) + block))
                    while self.pump(0):  # answer pings, notice a refusal while sending
                        pass
                    if file_id in self.replies:
                        break
                else:
                    self.send(p2pm.frame("file-end", struct.pack(">I", file_id) + (digest.digest() if streamed else b"")))
                self.wait_for(lambda: file_id in self.replies, f"the FILE_RESULT of '{name}'")
                reply = self.replies.pop(file_id)
            if reply["frame"] != "file-result":
                raise Fatal(p2pm.EXIT_FAILURE, f"expected FILE_RESULT for '{name}', got {reply['frame']}")
            emit("file-sent", id=file_id, path=path, status=reply["status"], message=reply["message"])
            if reply["status"] != 0:
                self.failed = True

    def say_lines(self, lines):
        """Lines from --say or standard input: `/who` asks for the member list, `/msg NAME TEXT` is
        private, anything else is text to everyone."""
        for line in lines:
            if line == "/who":
                self.send(p2pm.frame("who"))
                emit("sent", frame="who")
            elif line.startswith("/msg ") and len(line.split(" ", 2)) == 3:
                _, to, text = line.split(" ", 2)
                self.send_text(text, to)
            else:
                self.send_text(line)
            while self.pump(0):
                pass


def stdin_lines():
    """Standard input read by a thread, so frames keep being handled while it waits."""
    lines = queue.Queue()

    def read():
        for line in sys.stdin:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def tcp_connect(options):
    try:
        return socket.create_connection((options.host, options.port), timeout=options.timeout)
    except OSError as error:
        raise Fatal(p2pm.EXIT_UNAVAILABLE, f"cannot connect to {options.host} port {options.port}: {error}")


def connect(options):
    if options.plaintext:
        return tcp_connect(options)
    # The key is loaded (and its file checked) before anything goes on the network.
    identity = (p2pm.Identity.from_files(options.key, options.cert) if options.key
                else p2pm.Identity.in_directory(options.identity_dir) if options.identity_dir
                else p2pm.Identity.ephemeral())
    try:
        emit("identity", key=identity.key, short=p2pm.short(identity.key), key_file=identity.key_path)
        context = p2pm.tls_context(identity)
        raw = tcp_connect(options)
        tls = context.wrap_socket(raw, server_hostname=None, do_handshake_on_connect=False)
        try:
            tls.do_handshake()
        except (ssl.SSLError, OSError) as error:
            raise Fatal(p2pm.EXIT_UNAVAILABLE, f"the TLS 1.3 handshake with {options.host} port {options.port} "
                                               f"failed: {error}")
    finally:
        identity.discard()
    presented = p2pm.peer_key(tls)
    fields = {"version": tls.version(), "alpn": tls.selected_alpn_protocol(), "cipher": tls.cipher()[0],
              "server_key": presented, "safety_code": p2pm.safety_code(tls)}
    emit("tls", **fields)
    if options.room_code:
        # The exchange is bound to this TLS session (its exported sid) and to both keys (CI).
        sid = p2pm.export_keying_material(tls, p2pm_roomcode.LABEL, p2pm_roomcode.SESSION_ID_LENGTH)
        if sid is None or presented is None:
            raw.close()
            raise Fatal(p2pm.EXIT_UNAVAILABLE, "cannot export keying material from this TLS session: no room code")
        options.code_binding = (p2pm_roomcode.channel_identifier(p2pm.key_bytes(identity.key), p2pm.key_bytes(presented)), sid)
    if presented is None or (options.expected and not p2pm.key_matches(presented, options.expected)):
        raw.close()
        raise Fatal(p2pm.EXIT_KEY_MISMATCH,
                    f"the server at {options.host} port {options.port} presented the key {presented}, not the "
                    f"expected {options.expected_text}: someone may be in between (or the key changed); "
                    "nothing was sent")
    if fields["version"] != "TLSv1.3" or fields["alpn"] != p2pm.ALPN:
        raw.close()
        raise Fatal(p2pm.EXIT_UNAVAILABLE, f"the server did not agree to TLS 1.3 with ALPN {p2pm.ALPN} "
                                           f"({fields['version']}, ALPN {fields['alpn']})")
    return tls


def parse(arguments):
    parser = p2pm.argument_parser("svc-peer.py", __doc__)
    parser.add_argument("host", help="the server's address (IPv4, IPv6 or a name)")
    parser.add_argument("port", type=int, help="the server's TCP port")
    parser.add_argument("--plaintext", action="store_true", help="speak protocol version 1 over plain TCP")
    parser.add_argument("--fingerprint", metavar="F", help="the server's key: SHA256:... in full, or at least its first "
                        "12 base64 characters")
    parser.add_argument("--txt", metavar="ITEM", action="append", default=[],
                        help="a TXT item of the service; key=SHA256:... is taken as the expected key")
    parser.add_argument("--any-key", action="store_true", help="accept whatever key the server presents (reported)")
    parser.add_argument("--identity-dir", metavar="DIR", help="our key DIR/identity.pem (made when missing, 0600) "
                        "and certificate DIR/cert.pem (made at each start); default: a new key for this run")
    parser.add_argument("--key", metavar="PATH", help="our private key (PEM, mode 0600); with --cert")
    parser.add_argument("--cert", metavar="PATH", help="our certificate for --key (PEM)")
    parser.add_argument("--room-code", metavar="CODE", help="prove the room's code before HELLO (see above)")
    parser.add_argument("--name", default="pypeer", help="the member name to ask for (default: pypeer)")
    parser.add_argument("--say", metavar="TEXT", action="append",
                        help="text to send (repeatable); without it, lines of standard input are sent")
    parser.add_argument("--send", metavar="PATH", action="append", default=[], help="a file to send (repeatable)")
    parser.add_argument("--inbox", metavar="DIR", help="accept files into DIR (default: refuse them)")
    parser.add_argument("--no-streamed-files", dest="streamed_files", action="store_false",
                        help="speak files as a peer from before streamed files (capability 128): offers name the SHA-256")
    parser.add_argument("--expect-texts", metavar="N", type=int, default=0,
                        help="before leaving, wait until N TEXT frames have arrived")
    parser.add_argument("--expect-files", metavar="N", type=int, default=0,
                        help="before leaving, wait until N files were stored in --inbox")
    parser.add_argument("--linger", metavar="SECONDS", type=float, default=0.5,
                        help="keep reading this long after everything else (default: 0.5)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=10,
                        help="the longest wait for anything (connect, handshake, WELCOME, an answer, data; default: 10)")
    options = parser.parse_args(arguments)
    if not 0 < options.port < 65536:
        parser.error(f"port {options.port} is not between 1 and 65535")
    if options.timeout <= 0:
        parser.error("--timeout must be above 0")
    if (options.key is None) != (options.cert is None):
        parser.error("--key and --cert go together")
    if options.key and options.identity_dir:
        parser.error("give --identity-dir or --key/--cert, not both")
    if options.expect_files and not options.inbox:
        parser.error("--expect-files needs --inbox")
    if options.inbox and not os.path.isdir(options.inbox):
        parser.error(f"the inbox '{options.inbox}' is not a directory")
    txt_keys = [item[4:] for item in options.txt if item.lower().startswith("key=")]
    options.expected_text = options.fingerprint or (txt_keys[0] if txt_keys else None)
    options.expected = None
    if options.expected_text:
        options.expected = p2pm.normalized_expectation(options.expected_text)
        if options.expected is None:
            parser.error(f"'{options.expected_text}' is not a key fingerprint: give SHA256: and 43 base64 "
                         "characters, or at least the first 12")
        if options.fingerprint and txt_keys and not p2pm.key_matches("SHA256:" + (p2pm.normalized_expectation(
                txt_keys[0]) or ""), options.expected):
            parser.error(f"--fingerprint {options.fingerprint} disagrees with the TXT key {txt_keys[0]}")
    if options.room_code is not None:
        if options.plaintext:
            parser.error("--room-code is checked only inside TLS; it cannot go with --plaintext")
        try:
            options.room_code = p2pm_roomcode.parse_code(options.room_code)
        except ValueError as error:
            parser.error(f"--room-code: {error}")
    if not options.plaintext and options.expected is None and not options.any_key and not options.room_code:
        parser.error("over TLS the server's key must be known: give --fingerprint, --txt key=..., or --any-key")
    return options


def main(arguments):
    options = parse(arguments)
    stream = p2pm.FrameStream(connect(options))
    peer = Peer(options, stream)
    try:
        peer.join()
        lines = None if options.say else stdin_lines()
        if options.say:
            peer.say_lines(options.say)
        for number, path in enumerate(options.send, start=1):
            peer.send_file(number, path)
        while lines is not None:
            try:
                line = lines.get_nowait()
            except queue.Empty:
                peer.pump(0.1)
                continue
            if line is None:
                break
            peer.say_lines([line])
        peer.wait_for(lambda: peer.texts >= options.expect_texts, f"{options.expect_texts} texts")
        peer.wait_for(lambda: peer.stored >= options.expect_files and not peer.incoming,
                      f"{options.expect_files} files stored")
        end = time.monotonic() + options.linger
        while time.monotonic() < end:
            peer.pump(max(0.0, end - time.monotonic()))
        stream.send(p2pm.frame("goodbye", b"svc-peer.py is done"), options.timeout)
        stream.finish(min(options.timeout, 1.0))  # the server's close_notify is not waited for long
        emit("done", texts=peer.texts, files_stored=peer.stored, failed=peer.failed)
        return p2pm.EXIT_FAILURE if peer.failed else 0
    except EOFError as error:
        emit("closed", reason=str(error))
        said = (f" after ERROR {peer.fatal_error['name']}: {peer.fatal_error['message']}" if peer.fatal_error else "")
        raise Fatal(p2pm.EXIT_FAILURE, f"{error}{said} before the session was done")
    except ValueError as error:
        raise Fatal(p2pm.EXIT_FAILURE, str(error))
    except ssl.SSLError as error:
        if peer.welcomed is None:  # in TLS 1.3 a refusal of our certificate arrives after our handshake
            raise Fatal(p2pm.EXIT_UNAVAILABLE, f"the server refused the TLS session: {error}")
        raise Fatal(p2pm.EXIT_FAILURE, f"the TLS session failed: {error}")
    except OSError as error:
        raise Fatal(p2pm.EXIT_FAILURE, f"the connection failed: {error}")


if __name__ == "__main__":
    p2pm.run("svc-peer.py", main)
