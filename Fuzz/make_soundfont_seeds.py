#!/usr/bin/env python3
"""Writes small SoundFonts that load into FOLDER: the SoundFont fuzzer's seeds, made in code.

  python3 Fuzz/make_soundfont_seeds.py FOLDER

tiny.sf2: one preset (bank 0, program 0) over one instrument with a looped 64-point sample, as
SoundFont 2.01 specifies it (RIFF sfbk: INFO, sdta/smpl, pdta with its nine chunks); drums.sf2:
the same with a second preset in bank 128 and a key range; tiny.sf3: version 3 with the sample
flagged Ogg Vorbis (its bytes are not Ogg: the decoder's refusal is a path to cover too).
"""
import math, os, struct, sys

def chunk(name, data):
    pad = b"\0" if len(data) % 2 else b""
    return name.encode() + struct.pack("<I", len(data)) + data + pad

def listed(kind, chunks):
    return chunk("LIST", kind.encode() + b"".join(chunks))

def name20(text):
    return text.encode()[:19].ljust(20, b"\0")

def font(version=2, drums=False, vorbis=False):
    points = 64
    sample = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * i / 16))) for i in range(points))
    smpl = sample + b"\0" * 92  # 46 zero points after each sample, as the specification asks
    info = listed("INFO", [chunk("ifil", struct.pack("<HH", version, 1)), chunk("isng", b"EMU8000\0"),
                           chunk("INAM", b"Pianola fuzz seed\0")])
    sdta = listed("sdta", [chunk("smpl", smpl)])
    presets = [("Tone", 0, 0)] + ([("Kit", 0, 128)] if drums else [])
    phdr = b"".join(name20(n) + struct.pack("<HHHIII", program, bank, index, 0, 0, 0)
                    for index, (n, program, bank) in enumerate(presets))
    phdr += name20("EOP") + struct.pack("<HHHIII", 0, 0, len(presets), 0, 0, 0)
    # One preset zone each: instrument 0 (generator 41), a key range first for the kit (43).
    pgen = b""
    pbag = b""
    for index in range(len(presets)):
        pbag += struct.pack("<HH", len(pgen) // 4, 0)
        if index == 1:
            pgen += struct.pack("<HBB", 43, 35, 81)
        pgen += struct.pack("<HH", 41, 0)
    pbag += struct.pack("<HH", len(pgen) // 4, 0)
    pgen += struct.pack("<HH", 0, 0)
    pmod = b"\0" * 10
    inst = name20("Sine") + struct.pack("<H", 0) + name20("EOI") + struct.pack("<H", 1)
    ibag = struct.pack("<HH", 0, 0) + struct.pack("<HH", 2, 0)
    # Loop continuously (sampleModes 54 = 1), then sample 0 (53).
    igen = struct.pack("<HH", 54, 1) + struct.pack("<HH", 53, 0) + struct.pack("<HH", 0, 0)
    imod = b"\0" * 10
    kind = 0x11 if vorbis else 1  # mono; 0x10 flags Ogg Vorbis data (SoundFont 3)
    shdr = name20("Sine") + struct.pack("<IIIIIBbHH", 0, points, 8, 8 + 32, 22050, 60, 0, 0, kind)
    shdr += name20("EOS") + struct.pack("<IIIIIBbHH", 0, 0, 0, 0, 0, 0, 0, 0, 0)
    pdta = listed("pdta", [chunk("phdr", phdr), chunk("pbag", pbag), chunk("pmod", pmod), chunk("pgen", pgen),
                           chunk("inst", inst), chunk("ibag", ibag), chunk("imod", imod), chunk("igen", igen),
                           chunk("shdr", shdr)])
    body = b"sfbk" + info + sdta + pdta
    return b"RIFF" + struct.pack("<I", len(body)) + body

def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    for name, data in [("tiny.sf2", font()), ("drums.sf2", font(drums=True)), ("tiny.sf3", font(3, vorbis=True))]:
        with open(os.path.join(folder, "seed-" + name), "wb") as out:
            out.write(data)

if __name__ == "__main__":
    main()
