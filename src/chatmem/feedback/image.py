"""Screenshot sniffing (pure): the format and pixel size from a PNG IHDR or a JPEG SOF header.

The client's declared content type is ignored — only these bytes decide what is stored — and no
image library decodes untrusted pixels: reading the header is all the size check needs.
"""

from __future__ import annotations

from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Start-of-frame markers that carry the frame size (C4 = DHT, C8 = JPG, CC = DAC are not frames).
JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


class UnsupportedImage(ValueError):
    """Neither PNG nor JPEG."""


class BadImage(ValueError):
    """Looks like PNG/JPEG but the header is truncated or malformed."""


@dataclass(frozen=True)
class ImageInfo:
    mime: str
    width: int
    height: int

    @property
    def pixels(self) -> int:
        return self.width * self.height


def _png(data: bytes) -> ImageInfo:
    # signature, then the first chunk must be IHDR: length (13), type, width, height
    if len(data) < 24 or data[12:16] != b"IHDR" or int.from_bytes(data[8:12], "big") != 13:
        raise BadImage("PNG without a valid IHDR header")
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if not w or not h:
        raise BadImage("PNG with a zero dimension")
    return ImageInfo("image/png", w, h)


def _jpeg(data: bytes) -> ImageInfo:
    i, n = 2, len(data)
    while i < n:
        if data[i] != 0xFF:
            raise BadImage("JPEG segment does not start with a marker")
        while i < n and data[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            break
        marker = data[i]
        i += 1
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # standalone markers carry no length
            continue
        if marker in (0xD9, 0xDA):  # end of image / start of scan before any frame header
            break
        if i + 2 > n:
            break
        length = int.from_bytes(data[i : i + 2], "big")
        if length < 2:
            raise BadImage("JPEG segment with an invalid length")
        if marker in JPEG_SOF:
            if length < 7 or i + 7 > n:
                break
            h = int.from_bytes(data[i + 3 : i + 5], "big")
            w = int.from_bytes(data[i + 5 : i + 7], "big")
            if not w or not h:
                raise BadImage("JPEG with a zero dimension")
            return ImageInfo("image/jpeg", w, h)
        i += length
    raise BadImage("JPEG without a frame header")


def sniff(data: bytes) -> ImageInfo:
    """The image's format and size; ``UnsupportedImage`` / ``BadImage`` otherwise."""
    if data.startswith(PNG_SIGNATURE):
        return _png(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    raise UnsupportedImage("only PNG and JPEG screenshots are accepted")
