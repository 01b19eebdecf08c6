"""Writing and reading back the MIDI files of the device tests."""

import struct


def read_smf_messages(path):
    """(tick, bytes) of every channel message and SysEx of a format-0 file (meta events skipped)."""
    data = open(path, "rb").read()
    if data[:4] != b"MThd":
        raise ValueError(f"{path}: not a MIDI file")
    offset = 8 + struct.unpack(">I", data[4:8])[0]
    messages, tick, status = [], 0, 0
    while offset < len(data):
        length = struct.unpack(">I", data[offset + 4 : offset + 8])[0]
        track, position, offset = data[offset + 8 : offset + 8 + length], 0, offset + 8 + length

        def number():
            nonlocal position
            value = 0
            while True:
                byte = track[position]
                position += 1
                value = value << 7 | byte & 0x7F
                if byte < 0x80:
                    return value

        while position < len(track):
            tick += number()
            byte = track[position]
            if byte == 0xFF:
                position += 2
                size = number()
                position += size
            elif byte in (0xF0, 0xF7):
                position += 1
                size = number()
                messages.append((tick, bytes([0xF0]) + track[position : position + size]))
                position += size
            else:
                if byte & 0x80:
                    status = byte
                    position += 1
                size = 1 if status & 0xF0 in (0xC0, 0xD0) else 2
                messages.append((tick, bytes([status]) + track[position : position + size]))
                position += size
    return messages


def variable_length(value):
    """A standard MIDI file's variable-length quantity."""
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, (value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out)
