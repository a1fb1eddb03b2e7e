"""Recursive-length prefix encoding (Ethereum's yellow paper, appendix B): bytes, integers, lists."""


def _length_prefix(length: int, offset: int) -> bytes:
    if length < 56:
        return bytes([offset + length])
    encoded = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([offset + 55 + len(encoded)]) + encoded


def encode(item) -> bytes:
    """`item`: bytes, a non-negative int (big-endian, no leading zeros; 0 is empty), or a list of items."""
    if isinstance(item, int):
        if item < 0:
            raise ValueError("RLP encodes non-negative integers only")
        item = item.to_bytes((item.bit_length() + 7) // 8, "big")
    if isinstance(item, (bytes, bytearray)):
        if len(item) == 1 and item[0] < 0x80:
            return bytes(item)
        return _length_prefix(len(item), 0x80) + bytes(item)
    if isinstance(item, list):
        payload = b"".join(encode(element) for element in item)
        return _length_prefix(len(payload), 0xC0) + payload
    raise TypeError(f"cannot RLP-encode {type(item).__name__}")
