#!/usr/bin/env python3
"""Writes small SoundFonts cut from real ones into FOLDER: the soundfont-bank fuzzer's seeds.

  python3 Fuzz/make_soundfont_bank_seeds.py FOLDER [FONT...]

For each FONT (by default the project's own font and those of Debian's FluidR3_GM.sf2,
TimGM6mb.sf2 and FluidR3Mono_GM.sf3 that are installed), a few of its presets are kept with their instruments, zones, generators, modulators
and sample headers as the font has them; SoundFont 2 samples are cut to a few points (loops kept
inside), SoundFont 3 presets are chosen among those whose Ogg Vorbis streams are the smallest,
kept whole, so that the seeds stay under the fuzzer's 12 KiB. Also the font's first 4 KiB (its
header, cut short). Nothing here is committed: the seeds are made from the installed fonts.
"""
import os, struct, sys

LIMIT = 12288  # the fuzzer's -max_len for this target: an Ogg Vorbis stream's headers alone take 4 KiB

def chunk(name, data):
    pad = b"\0" if len(data) % 2 else b""
    return name + struct.pack("<I", len(data)) + data + pad

def listed(kind, chunks):
    return chunk(b"LIST", kind + b"".join(chunks))

def children(data, start, end):
    found = {}
    while start + 8 <= end:
        name, size = data[start:start + 4], struct.unpack_from("<I", data, start + 4)[0]
        if name == b"LIST":
            found[data[start + 8:start + 12]] = (start + 12, size - 4)
        elif name not in found:
            found[name] = (start + 8, size)
        start += 8 + size  # no pad byte skipped, as FluidSynth and the reader do
    return found

def records(data, span, size):
    return [data[span[0] + i * size:span[0] + (i + 1) * size] for i in range(span[1] // size)]

class Font:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = data = f.read()
        lists = children(data, 12, len(data))
        self.info = children(data, *self.bounds(lists[b"INFO"]))
        self.sdta = children(data, *self.bounds(lists[b"sdta"]))
        pdta = children(data, *self.bounds(lists[b"pdta"]))
        self.version = struct.unpack_from("<H", data, self.info[b"ifil"][0])[0]
        sizes = {b"phdr": 38, b"pbag": 4, b"pmod": 10, b"pgen": 4, b"inst": 22, b"ibag": 4, b"imod": 10,
                 b"igen": 4, b"shdr": 46}
        self.r = {name: records(data, pdta[name], size) for name, size in sizes.items()}

    @staticmethod
    def bounds(span):
        return span[0], span[0] + span[1]

    def zones(self, header, bag, gen, mod, index, size):
        at = 24 if header == b"phdr" else 20  # the record's first bag index
        first = struct.unpack_from("<H", self.r[header][index], at)[0]
        end = struct.unpack_from("<H", self.r[header][index + 1], at)[0]
        result = []
        for b in range(first, end):
            g0, m0 = struct.unpack("<HH", self.r[bag][b])
            g1, m1 = struct.unpack("<HH", self.r[bag][b + 1])
            result.append((self.r[gen][g0:g1], self.r[mod][m0:m1]))
        return result

    def preset_samples(self, index):
        samples = set()
        for gens, _ in self.zones(b"phdr", b"pbag", b"pgen", b"pmod", index, 38):
            for g in gens:
                if struct.unpack_from("<H", g)[0] == 41:
                    inst = struct.unpack_from("<H", g, 2)[0]
                    for igens, _ in self.zones(b"inst", b"ibag", b"igen", b"imod", inst, 22):
                        for ig in igens:
                            if struct.unpack_from("<H", ig)[0] == 53:
                                samples.add(struct.unpack_from("<H", ig, 2)[0])
        return samples

    def subset(self, presets, points=24):
        """A font of `presets` (indices), their instruments and samples, renumbered."""
        smpl_start = self.sdta[b"smpl"][0]
        inst_map, sample_map, smpl, shdr = {}, {}, b"", b""
        igen_out, imod_out, ibag_out, inst_out = b"", b"", b"", b""
        def sample(old):
            nonlocal smpl, shdr
            if old in sample_map:
                return sample_map[old]
            rec = bytearray(self.r[b"shdr"][old])
            start, end, ls, le = struct.unpack_from("<IIII", rec, 20)
            kind = struct.unpack_from("<H", rec, 44)[0]
            new_start = len(smpl) // (1 if self.version == 3 else 2)
            if self.version == 3 and kind & 0x10:
                smpl += self.data[smpl_start + start:smpl_start + end]
                struct.pack_into("<II", rec, 20, new_start, len(smpl))
            else:
                count = min(points, max(0, end - start))
                body = self.data[smpl_start + start * 2:smpl_start + (start + count) * 2]
                smpl += body + b"\0" * 92
                l0 = min(max(ls - start, 0), count)
                l1 = min(max(le - start, l0), count)
                struct.pack_into("<IIII", rec, 20, new_start, new_start + count, new_start + l0, new_start + l1)
            struct.pack_into("<H", rec, 42, 0)  # links dropped: the other side is not kept
            sample_map[old] = len(shdr) // 46
            shdr += bytes(rec)
            return sample_map[old]
        def renumber(gens, terminal, remap):
            out = b""
            for g in gens:
                op, amount = struct.unpack("<HH", g)
                out += struct.pack("<HH", op, remap(amount)) if op == terminal else g
            return out
        def instrument(old):
            nonlocal igen_out, imod_out, ibag_out, inst_out
            if old in inst_map:
                return inst_map[old]
            inst_out += self.r[b"inst"][old][:20] + struct.pack("<H", len(ibag_out) // 4)
            for gens, mods in self.zones(b"inst", b"ibag", b"igen", b"imod", old, 22):
                ibag_out += struct.pack("<HH", len(igen_out) // 4, len(imod_out) // 10)
                igen_out += renumber(gens, 53, sample)
                imod_out += b"".join(mods)
            inst_map[old] = len(inst_out) // 22 - 1
            return inst_map[old]
        phdr, pbag, pgen, pmod = b"", b"", b"", b""
        for index in presets:
            phdr += self.r[b"phdr"][index][:24] + struct.pack("<H", len(pbag) // 4) + self.r[b"phdr"][index][26:]
            for gens, mods in self.zones(b"phdr", b"pbag", b"pgen", b"pmod", index, 38):
                pbag += struct.pack("<HH", len(pgen) // 4, len(pmod) // 10)
                pgen += renumber(gens, 41, instrument)
                pmod += b"".join(mods)
        phdr += b"EOP".ljust(20, b"\0") + struct.pack("<HHH", 0, 0, len(pbag) // 4) + b"\0" * 12
        pbag += struct.pack("<HH", len(pgen) // 4, len(pmod) // 10)
        inst_out += b"EOI".ljust(20, b"\0") + struct.pack("<H", len(ibag_out) // 4)
        ibag_out += struct.pack("<HH", len(igen_out) // 4, len(imod_out) // 10)
        shdr += b"EOS".ljust(20, b"\0") + b"\0" * 26
        info = [chunk(b"ifil", self.data[self.info[b"ifil"][0]:self.info[b"ifil"][0] + 4]),
                chunk(b"isng", b"EMU8000\0"), chunk(b"INAM", b"Seed\0")]
        body = b"sfbk" + listed(b"INFO", info) + listed(b"sdta", [chunk(b"smpl", smpl)]) + listed(b"pdta", [
            chunk(b"phdr", phdr), chunk(b"pbag", pbag), chunk(b"pmod", pmod + b"\0" * 10),
            chunk(b"pgen", pgen + b"\0" * 4), chunk(b"inst", inst_out), chunk(b"ibag", ibag_out),
            chunk(b"imod", imod_out + b"\0" * 10), chunk(b"igen", igen_out + b"\0" * 4), chunk(b"shdr", shdr)])
        return b"RIFF" + struct.pack("<I", len(body)) + body

def main():
    folder = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    fonts = sys.argv[2:] or [os.path.join(here, "..", "SoundFonts", "PianolaGM.sf2")] + [
        p for p in ["/usr/share/sounds/sf3/FluidR3Mono_GM.sf3", "/usr/share/sounds/sf2/FluidR3_GM.sf2",
                    "/usr/share/sounds/sf2/TimGM6mb.sf2"] if os.path.exists(p)]
    os.makedirs(folder, exist_ok=True)
    written = 0
    for number, path in enumerate(fonts):
        font = Font(path)
        count = len(font.r[b"phdr"]) - 1
        def size(index):
            samples = font.preset_samples(index)
            if font.version != 3:
                return len(samples)
            return sum(struct.unpack_from("<I", font.r[b"shdr"][s], 24)[0] -
                       struct.unpack_from("<I", font.r[b"shdr"][s], 20)[0] for s in samples)
        # The presets with the fewest samples (SF3: the fewest Ogg bytes), a melodic and a kit each.
        ranked = sorted(range(count), key=size)
        picks = [ranked[:1], ranked[1:3], [i for i in ranked if struct.unpack_from("<H", font.r[b"phdr"][i], 22)[0] == 128][:1],
                 [0]]
        for kind, presets in enumerate(picks):
            if not presets:
                continue
            data = font.subset(presets)
            if len(data) > LIMIT:
                continue
            with open(os.path.join(folder, f"seed-bank-{number}-{kind}.sf{font.version}"), "wb") as out:
                out.write(data)
            written += 1
        with open(os.path.join(folder, f"seed-bank-{number}-head.sf{font.version}"), "wb") as out:
            out.write(font.data[:4096])
    if written == 0:
        sys.exit("make_soundfont_bank_seeds: no seed under 12 KiB")

if __name__ == "__main__":
    main()
