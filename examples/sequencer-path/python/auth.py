"""The builder API's authentication: an HS256 JWT `{iat}` under the shared 32-byte secret."""
import base64
import hashlib
import hmac
import json


def read_secret(path: str) -> bytes:
    """The secret from its file: 64 hex digits, `0x` optional, surrounding white space ignored."""
    with open(path, encoding="utf-8") as file:
        text = file.read().strip().removeprefix("0x").removeprefix("0X")
    secret = bytes.fromhex(text)
    if len(secret) != 32:
        raise ValueError(f"the JWT secret file {path} must hold 32 bytes as 64 hex digits")
    return secret


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(secret: bytes, iat: int) -> str:
    """The JWT to send as `Authorization: Bearer <token>`, issued at `iat` (seconds)."""
    header = _base64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _base64url(json.dumps({"iat": iat}, separators=(",", ":")).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_base64url(signature)}"
