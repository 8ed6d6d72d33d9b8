"""The room-code exchange of docs/PROTOCOL.md (*Room codes and admission*) for the Python peer:
CPace over ristretto255 with SHA-512 (draft-irtf-cfrg-cpace-21, initiator side, key confirmation
as its section 10.4 suggests), written from docs/PROTOCOL.md and docs/ROOM-CODE.md alone. The
group operations come from libsodium through ctypes (PyNaCl 1.5 has no ristretto255 bindings);
SHA-512 and HMAC from hashlib and hmac.
"""
import ctypes
import ctypes.util
import hashlib
import hmac

LABEL = b"EXPORTER-p2pm-room-code"
SESSION_ID_LENGTH = 32
ASSOCIATED_DATA = b"p2pm-room-code/1"
SHARE = 32
TAG = 64
MAX_ASSOCIATED_DATA = 1024
DSI = b"CPaceRistretto255"
SEPARATORS = " \t-._/\u00a0\u2010\u2011\u2012\u2013\u2014\u2212\u202f"
DAMM = [[0, 3, 1, 7, 5, 9, 8, 6, 4, 2], [7, 0, 9, 2, 1, 5, 4, 8, 6, 3], [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
        [1, 7, 5, 0, 9, 8, 3, 4, 2, 6], [6, 1, 2, 3, 0, 4, 5, 9, 7, 8], [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
        [5, 8, 6, 9, 7, 2, 0, 1, 3, 4], [8, 9, 4, 5, 3, 6, 2, 0, 1, 7], [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
        [2, 5, 8, 1, 4, 3, 6, 7, 9, 0]]


class ExchangeFailed(Exception):
    """The exchange failed: `wrong` is True when the server's tag did not check out (a wrong code
    or a relay), False for an unusable share or reply."""

    def __init__(self, message, wrong):
        super().__init__(message)
        self.wrong = wrong


def parse_code(text):
    """The digits of a room code as people type it; ValueError (never echoing the text) otherwise."""
    digits = [c for c in text[:65] if c not in SEPARATORS]
    if len(text) > 64 or not all("0" <= c <= "9" for c in digits):
        raise ValueError("a room code is 8 to 24 digits, optionally grouped with spaces or dashes")
    if not 8 <= len(digits) <= 24:
        raise ValueError(f"the room code has {len(digits)} digits; room codes have 8 to 24")
    interim = 0
    for c in digits:
        interim = DAMM[interim][int(c)]
    if interim != 0:
        raise ValueError("the room code has a typo (its last digit does not check out)")
    return "".join(digits).encode("ascii")


def leb128(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def prepend_len(data):
    return leb128(len(data)) + data


def lv_cat(*items):
    return b"".join(prepend_len(item) for item in items)


def channel_identifier(initiator_key, responder_key):
    """CI: lv_cat("initiator", initiator's 32-byte fingerprint, "responder", responder's)."""
    return lv_cat(b"initiator", initiator_key, b"responder", responder_key)


def _sodium():
    name = ctypes.util.find_library("sodium")
    if name is None:
        raise ExchangeFailed("libsodium is not installed (Debian: libsodium23)", False)
    library = ctypes.CDLL(name)
    if library.sodium_init() < 0:
        raise ExchangeFailed("libsodium could not be initialised", False)
    return library


class Initiator:
    """The member's side: `share` (Ya) to send in CODE_START, then `finish(reply)` checks the
    server's CODE_REPLY and returns Ta for CODE_CONFIRM."""

    def __init__(self, password, ci, sid, associated_data=ASSOCIATED_DATA):
        if len(sid) < 16:
            raise ExchangeFailed("the session id is missing: the exchange must be bound to the TLS session", False)
        self.sodium = _sodium()
        self.sid = sid
        self.ad = associated_data
        zero_pad = max(0, 128 - 1 - len(prepend_len(password)) - len(prepend_len(DSI)))
        generator_string = lv_cat(DSI, password, bytes(zero_pad), ci, sid)
        self.generator = ctypes.create_string_buffer(SHARE)
        self.sodium.crypto_core_ristretto255_from_hash(self.generator, hashlib.sha512(generator_string).digest())
        self.scalar = ctypes.create_string_buffer(32)
        self.sodium.crypto_core_ristretto255_scalar_random(self.scalar)
        share = ctypes.create_string_buffer(SHARE)
        if self.sodium.crypto_scalarmult_ristretto255(share, self.scalar, self.generator) != 0:
            raise ExchangeFailed("could not compute our share", False)
        self.share = share.raw

    def finish(self, reply):
        """Checks CODE_REPLY's payload (Yb, Tb, ADb); returns Ta. Raises ExchangeFailed."""
        if len(reply) < SHARE + TAG or len(reply) > SHARE + TAG + MAX_ASSOCIATED_DATA:
            raise ExchangeFailed(f"CODE_REPLY has {len(reply)} bytes", False)
        peer_share, peer_tag, peer_ad = reply[:SHARE], reply[SHARE:SHARE + TAG], reply[SHARE + TAG:]
        if peer_share == self.share:
            raise ExchangeFailed("the server sent our own share back", False)
        point = ctypes.create_string_buffer(SHARE)
        if self.sodium.crypto_scalarmult_ristretto255(point, self.scalar, peer_share) != 0:
            raise ExchangeFailed("the server's share is not a valid ristretto255 element", False)
        transcript = lv_cat(self.share, self.ad) + lv_cat(peer_share, peer_ad)
        isk = hashlib.sha512(lv_cat(b"CPaceRistretto255_ISK", self.sid, point.raw) + transcript).digest()
        mac_key = hashlib.sha512(b"CPaceMac" + self.sid + isk).digest()
        expected = hmac.new(mac_key, lv_cat(peer_share, peer_ad), hashlib.sha512).digest()
        if not hmac.compare_digest(expected, peer_tag):
            raise ExchangeFailed("the room code did not match (or something between us relays the connection)", True)
        return hmac.new(mac_key, lv_cat(self.share, self.ad), hashlib.sha512).digest()
