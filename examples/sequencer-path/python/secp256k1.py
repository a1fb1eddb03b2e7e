"""secp256k1 signing (RFC 6979 deterministic nonces, low s) and public-key recovery, in pure Python.

Signatures are (r, s, y_parity): y_parity is the parity of the nonce point's y, what Ethereum's
typed transactions carry as `yParity` and what `v - 27` is in a 65-byte signature.
"""
import hashlib
import hmac

from keccak import keccak256

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def _add(a, b):
    """The sum of two points (None is the point at infinity)."""
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        slope = 3 * a[0] * a[0] * pow(2 * a[1], -1, P) % P
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (slope * slope - a[0] - b[0]) % P
    return x, (slope * (a[0] - x) - a[1]) % P


def _multiply(k: int, point):
    result = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def _nonce(private_key: int, digest: bytes):
    """RFC 6979 section 3.2 with HMAC-SHA256: the k candidates for `digest`, in order."""
    x = private_key.to_bytes(32, "big")
    h = (int.from_bytes(digest, "big") % N).to_bytes(32, "big")
    v, k = b"\x01" * 32, b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        candidate = int.from_bytes(v, "big")
        if 1 <= candidate < N:
            yield candidate
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


def sign(digest: bytes, private_key: bytes) -> tuple[int, int, int]:
    """Sign the 32-byte `digest`: (r, s, y_parity), s in the lower half (EIP-2)."""
    d = int.from_bytes(private_key, "big")
    z = int.from_bytes(digest, "big")
    for k in _nonce(d, digest):
        point = _multiply(k, G)
        r = point[0] % N
        if r == 0:
            continue
        s = pow(k, -1, N) * (z + r * d) % N
        if s == 0:
            continue
        y_parity = (point[1] & 1) | (2 if point[0] >= N else 0)
        if s > N // 2:
            s, y_parity = N - s, y_parity ^ 1
        return r, s, y_parity
    raise AssertionError("unreachable")


def recover(digest: bytes, r: int, s: int, y_parity: int):
    """The public key (x, y) that signed `digest` as (r, s, y_parity). Raises ValueError when none did."""
    if not (1 <= r < N and 1 <= s < N and y_parity in (0, 1, 2, 3)):
        raise ValueError("malformed signature")
    x = r + N if y_parity & 2 else r
    y_squared = (pow(x, 3, P) + 7) % P
    y = pow(y_squared, (P + 1) // 4, P)
    if y * y % P != y_squared:
        raise ValueError("r is not the x of a curve point")
    if (y & 1) != (y_parity & 1):
        y = P - y
    z = int.from_bytes(digest, "big")
    r_inverse = pow(r, -1, N)
    point = _add(_multiply(s * r_inverse % N, (x, y)), _multiply(-z * r_inverse % N, G))
    if point is None:
        raise ValueError("no public key")
    return point


def address_of_point(point) -> str:
    """The Ethereum address of a public key, checksummed (EIP-55)."""
    raw = keccak256(point[0].to_bytes(32, "big") + point[1].to_bytes(32, "big"))[12:].hex()
    return checksum(raw)


def address_of_key(private_key: bytes) -> str:
    return address_of_point(_multiply(int.from_bytes(private_key, "big"), G))


def checksum(address: str) -> str:
    """`address` (hex, with or without 0x) in EIP-55 mixed case."""
    raw = address.lower().removeprefix("0x")
    digest = keccak256(raw.encode()).hex()
    return "0x" + "".join(c.upper() if int(digest[i], 16) >= 8 else c for i, c in enumerate(raw))
