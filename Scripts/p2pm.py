"""What Scripts/svc-peer.py and Scripts/svc-attack.py share: the frames of docs/PROTOCOL.md
(version 1), identities (an ECDSA P-256 key and a self-signed certificate made with the openssl
command), key fingerprints (SHA-256 of the DER SubjectPublicKeyInfo, ssh style), TLS 1.3 contexts
with ALPN p2pm/2, and the safety code of a session.

Standard library only, plus the `openssl` command for making keys (Scripts/install-deps)."""
import argparse
import base64
import ctypes
import ctypes.util
import hashlib
import os
import shutil
import socket
import ssl
import stat
import struct
import subprocess
import sys
import tempfile

ALPN = "p2pm/2"
MAGIC = b"P2PM"
VERSION = 1
MAX_PAYLOAD = 1 << 20
SAFETY_LABEL = b"EXPORTER-p2pm-safety-code"

# Exit codes, as the Swift tools use them (sysexits).
EXIT_FAILURE = 1
EXIT_USAGE = 64
EXIT_UNAVAILABLE = 69
EXIT_KEY_MISMATCH = 77
EXIT_IDENTITY = 78

TYPES = {
    0x01: "hello", 0x02: "welcome", 0x03: "goodbye", 0x04: "error", 0x05: "ping", 0x06: "pong",
    0x07: "code-start", 0x08: "code-reply", 0x09: "code-confirm",
    0x10: "text", 0x11: "who", 0x12: "presence", 0x13: "session", 0x14: "ack", 0x15: "history",
    0x20: "file-offer", 0x21: "file-accept", 0x22: "file-chunk", 0x23: "file-end", 0x24: "file-result",
    0x25: "file-offer-to", 0x26: "file-offer-from", 0x27: "file-cancel", 0x28: "file-credit",
}
CODES = {type_name: code for code, type_name in TYPES.items()}

ERRORS = {
    1: "bad-magic", 2: "unsupported-version", 3: "frame-too-large", 4: "unknown-type", 5: "malformed-frame",
    6: "not-handshaken", 7: "server-full", 8: "handshake-timeout", 9: "unknown-peer", 10: "invalid-name",
    11: "heartbeat-timeout", 12: "file-protocol", 13: "too-slow", 14: "tls-required", 15: "code-required",
    16: "wrong-room-code", 17: "too-many-attempts", 18: "not-admitted", 19: "code-exchange",
}


class Fatal(Exception):
    """Ends the tool with `status` after printing `message` on standard error."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# --- Frames -----------------------------------------------------------------------------------

def frame(kind, payload=b""):
    """One frame: the 8-byte header (length u32, type u16, flags u16 = 0), then the payload."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"a payload of {len(payload)} bytes is over the 1 MiB frame limit")
    return struct.pack(">IHH", len(payload), CODES[kind] if isinstance(kind, str) else kind, 0) + payload


def string(text, limit=255):
    encoded = text.encode("utf-8") if isinstance(text, str) else text
    if len(encoded) > limit:
        raise ValueError(f"{len(encoded)} bytes is over the {limit}-byte limit of this field")
    return struct.pack(">H", len(encoded)) + encoded


def hello(name, capabilities):
    return frame("hello", MAGIC + struct.pack(">HI", VERSION, capabilities) + string(name))


class Reader:
    """Takes the fields of one payload in order; raises ValueError when they do not fit it."""

    def __init__(self, payload):
        self.payload = payload
        self.offset = 0

    def take(self, count):
        if count > len(self.payload) - self.offset:
            raise ValueError("the payload ends before its fields do")
        data = self.payload[self.offset:self.offset + count]
        self.offset += count
        return data

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack(">H", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def u64(self):
        return struct.unpack(">Q", self.take(8))[0]

    def str(self):
        return self.take(self.u16()).decode("utf-8", "replace")

    def rest(self):
        return self.take(len(self.payload) - self.offset)

    def end(self):
        if self.offset != len(self.payload):
            raise ValueError(f"{len(self.payload) - self.offset} bytes left over after the fields")


def decode(kind, payload):
    """A frame as a dict for JSON output ("frame": its name, then its fields). Text stays text;
    json.dumps escapes every control character, so nothing from the wire reaches a terminal raw."""
    name = TYPES.get(kind)
    fields = {"frame": name or f"unknown-0x{kind:04x}"}
    r = Reader(payload)
    if name == "hello":
        fields.update(magic=r.take(4).decode("latin-1"), version=r.u16(), capabilities=r.u32(), name=r.str())
    elif name == "welcome":
        fields.update(name=r.str())
    elif name == "goodbye":
        fields.update(reason=r.rest().decode("utf-8", "replace"))
    elif name == "error":
        code = r.u16()
        fields.update(code=code, name=ERRORS.get(code, "unknown"), message=r.rest().decode("utf-8", "replace"))
    elif name in ("ping", "pong"):
        fields.update(token=r.u64())
    elif name == "text":
        fields.update({"from": r.str(), "to": r.str(), "text": r.rest().decode("utf-8", "replace")})
    elif name == "presence":
        fields.update(kind=r.u8())
        fields.update(names=[r.str() for _ in range(r.u16())])
    elif name == "ack":
        fields.update(through=r.u64())
    elif name == "history":
        fields.update({"time": r.u64(), "from": r.str(), "text": r.rest().decode("utf-8", "replace")})
    elif name in ("file-offer", "file-offer-from"):
        fields.update(id=r.u32(), size=r.u64(), sha256=r.take(32).hex())
        if name == "file-offer-from":
            fields.update({"from": r.str(), "host": r.u64()})
        fields.update(name=r.take(r.u16()).decode("utf-8", "replace"))
    elif name in ("file-accept", "file-credit"):
        fields.update(id=r.u32(), **{"offset" if name == "file-accept" else "through": r.u64()})
    elif name == "file-chunk":
        fields.update(id=r.u32(), size=len(r.rest()))
    elif name == "file-end":
        fields.update(id=r.u32())
        if len(payload) == 4 + 32:  # streamed files (capability 128): the SHA-256 comes at the end
            fields.update(sha256=r.take(32).hex())
    elif name == "file-result":
        fields.update(id=r.u32(), status=r.u8(), message=r.rest().decode("utf-8", "replace"))
    elif name == "file-cancel":
        fields.update(id=r.u32(), reason=r.rest().decode("utf-8", "replace"))
    elif name in ("code-start", "code-reply"):
        fields.update(share=r.take(32).hex())
        if name == "code-reply":
            fields.update(tag=r.take(64).hex())
        fields.update(associated_data=r.rest().hex())
    elif name == "code-confirm":
        fields.update(tag=r.take(64).hex())
    else:
        fields.update(payload_size=len(payload))
        return fields
    r.end()
    return fields


class FrameStream:
    """Frames over a socket (plain or TLS): the header is checked before the payload is read."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = bytearray()
        self.closed = False

    def send(self, data, timeout):
        self.sock.settimeout(timeout)
        self.sock.sendall(data)

    def finish(self, timeout):
        """Ends our side of the stream: close_notify over TLS, then the TCP shutdown."""
        self.sock.settimeout(timeout)
        try:
            if isinstance(self.sock, ssl.SSLSocket):
                self.sock = self.sock.unwrap()
            self.sock.shutdown(socket.SHUT_WR)
        except (OSError, ValueError):
            pass

    def next(self, timeout):
        """(type, payload), or None when nothing whole came within `timeout` seconds.
        Raises EOFError when the peer closed; ValueError for a frame over the 1 MiB limit."""
        while True:
            if len(self.buffer) >= 8:
                length, kind, flags = struct.unpack(">IHH", self.buffer[:8])
                if length > MAX_PAYLOAD:
                    raise ValueError(f"the peer announced a frame of {length} bytes, over the 1 MiB limit")
                if len(self.buffer) >= 8 + length:
                    payload = bytes(self.buffer[8:8 + length])
                    del self.buffer[:8 + length]
                    return kind, flags, payload
            if self.closed:
                raise EOFError("the peer closed the connection")
            self.sock.settimeout(timeout)
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, BlockingIOError, ssl.SSLWantReadError):
                return None
            if not data:
                self.closed = True
                if self.buffer:
                    raise EOFError(f"the peer closed the connection in the middle of a frame ({len(self.buffer)} bytes)")
                raise EOFError("the peer closed the connection")
            self.buffer += data


# --- Keys and fingerprints --------------------------------------------------------------------

def _der_item(data, offset):
    """(tag, start of content, end of content) of the DER item at `offset`; bounds-checked."""
    if offset + 2 > len(data):
        raise ValueError("DER item past the end")
    tag, length = data[offset], data[offset + 1]
    offset += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or offset + count > len(data):
            raise ValueError("DER length not supported")
        length = int.from_bytes(data[offset:offset + count], "big")
        offset += count
    if offset + length > len(data):
        raise ValueError("DER item longer than its container")
    return tag, offset, offset + length


def spki_from_certificate(der):
    """The DER SubjectPublicKeyInfo of an X.509 certificate in DER: Certificate -> tbsCertificate ->
    [0] version (optional), serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo."""
    tag, start, _ = _der_item(der, 0)
    if tag != 0x30:
        raise ValueError("not a certificate: no outer SEQUENCE")
    tag, start, end = _der_item(der, start)
    if tag != 0x30:
        raise ValueError("not a certificate: no tbsCertificate SEQUENCE")
    offset = start
    tag, _, item_end = _der_item(der, offset)
    if tag == 0xA0:  # explicit version
        offset = item_end
    for _ in range(5):  # serialNumber, signature, issuer, validity, subject
        _, _, offset = _der_item(der, offset)
    tag, _, item_end = _der_item(der, offset)
    if tag != 0x30 or item_end > end:
        raise ValueError("not a certificate: no subjectPublicKeyInfo SEQUENCE")
    return bytes(der[offset:item_end])


def fingerprint(spki):
    """`SHA256:` and the unpadded base64 of SHA-256(spki)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(spki).digest()).decode().rstrip("=")


def key_bytes(full):
    """The 32 bytes of a key's full form (SHA256: and 43 characters of unpadded base64)."""
    return base64.b64decode(full[len("SHA256:"):] + "=")


def short(full):
    return full[len("SHA256:"):][:12]


def normalized_expectation(text):
    """The base64 part of a full fingerprint or of a prefix of at least 12 characters (with or
    without `SHA256:`), or None when `text` cannot name a key."""
    given = text[7:] if text.lower().startswith("sha256:") else text
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    if not 12 <= len(given) <= 43 or not set(given) <= alphabet:
        return None
    if len(given) == 43:
        try:
            if len(base64.b64decode(given + "=")) != 32:
                return None
        except ValueError:
            return None
    return given


def key_matches(full, expected_base64):
    return full[len("SHA256:"):].startswith(expected_base64)


def check_key_file(path):
    """Refuses a private key file others could read, or not ours (as ssh does)."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise Fatal(EXIT_IDENTITY, f"cannot read the key file '{path}': {error.strerror}")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise Fatal(EXIT_IDENTITY, f"permissions {mode:04o} for '{path}' are too open: a private key must be "
                                   f"readable only by you; run: chmod 600 '{path}'")
    if info.st_uid != os.geteuid():
        raise Fatal(EXIT_IDENTITY, f"the key file '{path}' belongs to user {info.st_uid}, not to you "
                                   f"({os.geteuid()}): use a key file of your own")


def _openssl(arguments):
    tool = shutil.which("openssl")
    if tool is None:
        raise Fatal(EXIT_IDENTITY, "the openssl command is needed to make a key; install it: Scripts/install-deps "
                                   "(Debian package openssl)")
    result = subprocess.run([tool] + arguments, capture_output=True, text=True)
    if result.returncode != 0:
        raise Fatal(EXIT_IDENTITY, f"openssl {arguments[0]} failed: {result.stderr.strip()}")


class Identity:
    """A private key (PKCS#8 PEM, ECDSA P-256, mode 0600) and a self-signed certificate for it."""

    def __init__(self, key_path, cert_path, temporary=None):
        self.key_path = key_path
        self.cert_path = cert_path
        self.temporary = temporary
        with open(cert_path) as file:
            der = ssl.PEM_cert_to_DER_cert(file.read())
        self.key = fingerprint(spki_from_certificate(der))

    @classmethod
    def in_directory(cls, directory, temporary=None):
        """DIR/identity.pem (made with a new P-256 key when missing, 0600) and DIR/cert.pem (a
        self-signed certificate for it, CN=svc, made anew at every start as the Swift tools do)."""
        if not os.path.isdir(directory):
            raise Fatal(EXIT_IDENTITY, f"the identity directory '{directory}' does not exist; create it (mkdir -m 700)")
        key_path = os.path.join(directory, "identity.pem")
        cert_path = os.path.join(directory, "cert.pem")
        old_umask = os.umask(0o077)
        try:
            if not os.path.exists(key_path):
                _openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key_path])
            check_key_file(key_path)
            _openssl(["req", "-new", "-x509", "-key", key_path, "-subj", "/CN=svc", "-days", "36525", "-sha256",
                      "-out", cert_path + ".new"])
            os.replace(cert_path + ".new", cert_path)
        finally:
            os.umask(old_umask)
        return cls(key_path, cert_path, temporary)

    @classmethod
    def ephemeral(cls):
        """A new key in a private temporary directory, removed by `discard()`."""
        directory = tempfile.mkdtemp(prefix="svc-peer-key-")
        return cls.in_directory(directory, temporary=directory)

    @classmethod
    def from_files(cls, key_path, cert_path):
        check_key_file(key_path)
        try:
            return cls(key_path, cert_path)
        except (OSError, ValueError) as error:
            raise Fatal(EXIT_IDENTITY, f"cannot use the certificate '{cert_path}': {error}")

    def discard(self):
        if self.temporary:
            shutil.rmtree(self.temporary, ignore_errors=True)


# --- TLS ----------------------------------------------------------------------------------------

def tls_context(identity, server_side=False, versions=(ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
                alpn=(ALPN,)):
    """TLS 1.3 only (by default), ALPN p2pm/2, our certificate, no session tickets. Certificates
    are not checked by the library: the caller compares the peer's key fingerprint."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server_side else ssl.PROTOCOL_TLS_CLIENT)
    if not server_side:
        context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version, context.maximum_version = versions
    context.options |= ssl.OP_NO_TICKET
    if alpn:
        context.set_alpn_protocols(list(alpn))
    if identity is not None:
        try:
            context.load_cert_chain(identity.cert_path, identity.key_path)
        except (ssl.SSLError, OSError) as error:
            raise Fatal(EXIT_IDENTITY, f"cannot use the key '{identity.key_path}' with '{identity.cert_path}': {error}; "
                                       "move the files away to get a new key")
    return context


def peer_key(tls_socket):
    """The fingerprint of the key the other end presented, or None when it presented none."""
    der = tls_socket.getpeercert(binary_form=True)
    return fingerprint(spki_from_certificate(der)) if der else None


def _ssl_pointer(tls_socket):
    """The SSL* behind a Python SSLSocket (CPython's PySSLSocket: the object header, the socket
    object, then the SSL*). Checked against what the ssl module itself reports before it is used."""
    if sys.implementation.name != "cpython" or not (3, 7) <= sys.version_info[:2] <= (3, 13):
        return None
    ssl_object = getattr(tls_socket, "_sslobj", None)
    if ssl_object is None:
        return None
    pointer = ctypes.c_void_p.from_address(id(ssl_object) + 3 * ctypes.sizeof(ctypes.c_void_p)).value
    return pointer


def _libssl():
    name = ctypes.util.find_library("ssl")
    if name is None:
        return None
    library = ctypes.CDLL(name)
    library.SSL_version.argtypes = [ctypes.c_void_p]
    library.SSL_get_current_cipher.argtypes = [ctypes.c_void_p]
    library.SSL_get_current_cipher.restype = ctypes.c_void_p
    library.SSL_CIPHER_get_name.argtypes = [ctypes.c_void_p]
    library.SSL_CIPHER_get_name.restype = ctypes.c_char_p
    library.SSL_export_keying_material.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                                   ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    return library


def export_keying_material(tls_socket, label, length):
    """`length` bytes exported from the TLS session (RFC 8446 section 7.5, no context), or None
    when this Python's ssl module cannot be reached through ctypes."""
    pointer = _ssl_pointer(tls_socket)
    library = _libssl() if pointer else None
    if library is None:
        return None
    # The pointer is used only once it answers like this very session: TLS 1.3, same cipher.
    cipher = tls_socket.cipher()
    if library.SSL_version(pointer) != 0x0304 or cipher is None:
        return None
    current = library.SSL_get_current_cipher(pointer)
    if not current or library.SSL_CIPHER_get_name(current).decode() != cipher[0]:
        return None
    out = ctypes.create_string_buffer(length)
    if library.SSL_export_keying_material(pointer, out, length, label, len(label), None, 0, 0) != 1:
        return None
    return out.raw


def safety_code(tls_socket):
    """The session's safety code as the Swift tools show it: 8 bytes exported with the label
    EXPORTER-p2pm-safety-code (no context), as a big-endian integer modulo 10^12, twelve digits in
    groups of three. None when this Python's ssl module cannot be reached through ctypes."""
    exported = export_keying_material(tls_socket, SAFETY_LABEL, 8)
    return safety_code_from_exported(exported) if exported else None


def safety_code_from_exported(data):
    digits = f"{int.from_bytes(data, 'big') % 10 ** 12:012d}"
    return " ".join(digits[start:start + 3] for start in range(0, 12, 3))


def argument_parser(prog, description):
    """An argparse parser that reports usage errors like svc's tools: exit 64 and a pointer to --help."""
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            sys.stderr.write(f"Error: {message}\n{self.format_usage()}  See '{prog} --help' for more information.\n")
            sys.exit(EXIT_USAGE)

    return Parser(prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)


def run(prog, main):
    """Runs a tool's main(arguments): its status is the exit status; a Fatal is printed as
    'prog: message' and exits with its status; Ctrl-C exits 130."""
    try:
        sys.exit(main(sys.argv[1:]))
    except Fatal as failure:
        sys.stderr.write(f"{prog}: {failure}\n")
        sys.exit(failure.status)
    except KeyboardInterrupt:
        sys.exit(130)
