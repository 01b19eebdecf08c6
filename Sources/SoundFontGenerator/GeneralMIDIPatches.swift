import MIDICore

/// The 128 General MIDI programs (bank 0), grouped by the sixteen GM families. Every family has
/// a character of its own (struck and decaying, sustained, bowed, blown, plucked, synthetic) and
/// the programs inside a family vary tone, envelope and brightness.
enum GeneralMIDIPatches {

    // Family archetypes; each program below starts from one and adjusts it.
    private static func struck(_ tone: String, decay: Double, cutoff: Double? = nil) -> Patch {
        Patch(tone) {
            $0.decay = decay; $0.sustainDB = 100; $0.release = 0.3; $0.decayPerKey = 30
            if let cutoff { $0.cutoff = cutoff; $0.filterEnvelopeCents = 2400; $0.modDecay = decay / 3 }
        }
    }
    private static func sustained(_ tone: String, attack: Double = 0.01, release: Double = 0.15) -> Patch {
        Patch(tone) {
            $0.attack = attack; $0.release = release
        }
    }
    private static func plucked(_ tone: String, decay: Double, cutoff: Double) -> Patch {
        Patch(tone) {
            $0.decay = decay; $0.sustainDB = 100; $0.release = 0.2; $0.decayPerKey = 25
            $0.cutoff = cutoff; $0.filterEnvelopeCents = 3000; $0.modDecay = decay / 4
        }
    }
    private static func bowed(_ tone: String, attack: Double) -> Patch {
        Patch(tone) {
            $0.attack = attack; $0.release = 0.35; $0.vibratoCents = 12; $0.vibratoDelay = 0.25; $0.chorus = 150
            $0.cutoff = 5000
        }
    }
    private static func blown(_ tone: String, attack: Double = 0.04, cutoff: Double = 4000, swell: Int = 1800) -> Patch
    {
        Patch(tone) {
            $0.attack = attack; $0.release = 0.12; $0.vibratoCents = 10; $0.vibratoDelay = 0.4
            $0.cutoff = cutoff; $0.filterEnvelopeCents = swell; $0.modAttack = 0.05; $0.modDecay = 0.3
            $0.modSustain = 0.6
        }
    }
    private static func pad(_ tone: String, attack: Double, cutoff: Double = 3000) -> Patch {
        Patch(tone) {
            $0.attack = attack; $0.release = 1.5; $0.cutoff = cutoff; $0.chorus = 400; $0.reverb = 400
            $0.layers = [(0, -6, -250), (0, 6, 250)]; $0.attenuationDB = 3
        }
    }

    /// The patch of General MIDI program `program` (0–127), from its family's table; any other
    /// number gets the last program's (Gunshot).
    static func patch(for program: Int) -> Patch {
        switch program {
        case 0..<8: return pianos(program)
        case 8..<16: return chromaticPercussion(program)
        case 16..<24: return organs(program)
        case 24..<32: return guitars(program)
        case 32..<40: return basses(program)
        case 40..<48: return strings(program)
        case 48..<56: return ensembles(program)
        case 56..<64: return brass(program)
        case 64..<72: return reeds(program)
        case 72..<80: return pipes(program)
        case 80..<88: return synthLeads(program)
        case 88..<96: return synthPads(program)
        case 96..<104: return synthEffects(program)
        case 104..<112: return ethnic(program)
        case 112..<120: return percussive(program)
        default: return soundEffects(program)
        }
    }

    /// Programs 0–7: pianos.
    private static func pianos(_ program: Int) -> Patch {
        switch program {
        case 0: return struck("piano", decay: 9, cutoff: 2500)
        case 1: return struck("piano", decay: 8, cutoff: 5000)
        case 2:
            var p = struck("epiano", decay: 6, cutoff: 4000); p.layers = [(0, 0, 0), (12, 3, 0)]; p.attenuationDB = 3;
            return p
        case 3:
            var p = struck("piano", decay: 7, cutoff: 4000); p.layers = [(0, -12, -150), (0, 12, 150)];
            p.attenuationDB = 3; return p
        case 4: var p = struck("epiano", decay: 5); p.tremoloCB = 40; p.tremoloHz = 4.5; return p
        case 5: var p = struck("fmpiano", decay: 4, cutoff: 6000); p.chorus = 300; return p
        case 6: return plucked("harpsi", decay: 4, cutoff: 6000)
        case 7: return plucked("clav", decay: 3, cutoff: 4500)
        default: preconditionFailure("program \(program) is not a piano program")  // see patch(for:)
        }
    }

    /// Programs 8–15: chromatic percussion.
    private static func chromaticPercussion(_ program: Int) -> Patch {
        switch program {
        case 8: return struck("celesta", decay: 2.5)
        case 9: return struck("glock", decay: 3)
        case 10: var p = struck("celesta", decay: 2); p.layers = [(12, 0, 0)]; return p
        case 11: var p = struck("marimba", decay: 4); p.tremoloCB = 60; p.tremoloHz = 5; p.release = 1; return p
        case 12: return struck("marimba", decay: 1.2)
        case 13: return struck("xylo", decay: 0.8)
        case 14: return struck("tubebell", decay: 6)
        case 15:
            var p = plucked("steel", decay: 3, cutoff: 3500); p.layers = [(0, -5, -100), (0, 5, 100)];
            p.attenuationDB = 3; return p
        default: preconditionFailure("program \(program) is not chromatic percussion program")  // see patch(for:)
        }
    }

    /// Programs 16–23: organs.
    private static func organs(_ program: Int) -> Patch {
        switch program {
        case 16: return sustained("drawbar")
        case 17: return sustained("percorg")
        case 18: var p = sustained("rockorg"); p.tremoloCB = 30; p.tremoloHz = 6.5; p.cutoff = 5000; return p
        case 19: var p = sustained("pipeorg", attack: 0.08, release: 0.6); p.reverb = 500; return p
        case 20: return sustained("reedorg", attack: 0.05)
        case 21:
            var p = sustained("accordion", attack: 0.03); p.layers = [(0, -8, 0), (0, 8, 0)]; p.attenuationDB = 3;
            return p
        case 22: var p = blown("harmonica", attack: 0.03); p.vibratoCents = 20; return p
        case 23:
            var p = sustained("accordion", attack: 0.03); p.layers = [(0, 0, 0), (12, 4, 0)]; p.attenuationDB = 3;
            return p
        default: preconditionFailure("program \(program) is not an organ program")  // see patch(for:)
        }
    }

    /// Programs 24–31: guitars.
    private static func guitars(_ program: Int) -> Patch {
        switch program {
        case 24: return plucked("nylon", decay: 4, cutoff: 2500)
        case 25: return plucked("steel", decay: 5, cutoff: 4000)
        case 26: return plucked("nylon", decay: 4, cutoff: 1500)
        case 27: var p = plucked("steel", decay: 5, cutoff: 5000); p.chorus = 200; return p
        case 28: return plucked("steel", decay: 0.8, cutoff: 1500)
        case 29:
            var p = sustained("overdrive"); p.decay = 6; p.sustainDB = 20; p.cutoff = 3500; p.attenuationDB = 4;
            return p
        case 30:
            var p = sustained("overdrive"); p.decay = 8; p.sustainDB = 12; p.cutoff = 6000; p.attenuationDB = 5;
            return p
        case 31: var p = struck("sine", decay: 3); p.layers = [(12, 0, 0)]; return p
        default: preconditionFailure("program \(program) is not a guitar program")  // see patch(for:)
        }
    }

    /// Programs 32–39: basses.
    private static func basses(_ program: Int) -> Patch {
        switch program {
        case 32: return plucked("bass", decay: 3, cutoff: 900)
        case 33: return plucked("bass", decay: 3.5, cutoff: 1400)
        case 34: return plucked("slap", decay: 3, cutoff: 2000)
        case 35:
            var p = plucked("bass", decay: 4, cutoff: 900); p.filterEnvelopeCents = 800; p.modAttack = 0.08; return p
        case 36: return plucked("slap", decay: 2.5, cutoff: 3500)
        case 37: return plucked("slap", decay: 2, cutoff: 5000)
        case 38:
            var p = plucked("saw", decay: 2, cutoff: 400); p.resonanceDB = 8; p.filterEnvelopeCents = 4000;
            p.sustainDB = 15; return p
        case 39:
            var p = plucked("square", decay: 2, cutoff: 500); p.resonanceDB = 10; p.filterEnvelopeCents = 3600;
            p.sustainDB = 12; return p
        default: preconditionFailure("program \(program) is not a bass program")  // see patch(for:)
        }
    }

    /// Programs 40–47: strings.
    private static func strings(_ program: Int) -> Patch {
        switch program {
        case 40: return bowed("strings", attack: 0.08)
        case 41: var p = bowed("strings", attack: 0.1); p.cutoff = 3800; return p
        case 42: var p = bowed("strings", attack: 0.12); p.cutoff = 3000; return p
        case 43: var p = bowed("strings", attack: 0.15); p.cutoff = 2000; return p
        case 44: var p = bowed("strings", attack: 0.05); p.tremoloCB = 120; p.tremoloHz = 12; return p
        case 45: return plucked("nylon", decay: 0.5, cutoff: 2000)
        case 46: var p = plucked("nylon", decay: 5, cutoff: 3000); p.reverb = 400; return p
        case 47:
            var p = struck("drum", decay: 2.5, cutoff: 1200); p.pitchEnvelopeCents = -50; p.modDecay = 0.3; return p
        default: preconditionFailure("program \(program) is not a string program")  // see patch(for:)
        }
    }

    /// Programs 48–55: ensembles.
    private static func ensembles(_ program: Int) -> Patch {
        switch program {
        case 48:
            var p = bowed("strings", attack: 0.2); p.layers = [(0, -7, -300), (0, 7, 300)]; p.attenuationDB = 3;
            return p
        case 49:
            var p = bowed("strings", attack: 0.4); p.layers = [(0, -10, -300), (0, 10, 300)]; p.attenuationDB = 3;
            return p
        case 50: return pad("saw", attack: 0.3, cutoff: 4000)
        case 51: return pad("pulse", attack: 0.5, cutoff: 2500)
        case 52: var p = pad("aah", attack: 0.25, cutoff: 6000); p.vibratoCents = 8; return p
        case 53: var p = pad("ooh", attack: 0.2, cutoff: 4000); p.vibratoCents = 8; return p
        case 54: var p = pad("ooh", attack: 0.15, cutoff: 3000); p.layers = [(0, 0, 0)]; return p
        case 55:
            var p = struck("brass", decay: 1.2, cutoff: 5000); p.layers = [(0, 0, 0), (7, 0, -200), (12, 0, 200)];
            p.attenuationDB = 3; return p
        default: preconditionFailure("program \(program) is not an ensemble program")  // see patch(for:)
        }
    }

    /// Programs 56–63: brass.
    private static func brass(_ program: Int) -> Patch {
        switch program {
        case 56: return blown("brass", attack: 0.03, cutoff: 2500, swell: 2400)
        case 57: return blown("brass", attack: 0.05, cutoff: 1500, swell: 2000)
        case 58: return blown("brass", attack: 0.06, cutoff: 800, swell: 1500)
        case 59: var p = blown("brass", attack: 0.03, cutoff: 1800, swell: 600); p.resonanceDB = 6; return p
        case 60: var p = blown("brass", attack: 0.08, cutoff: 900, swell: 900); p.reverb = 400; return p
        case 61:
            var p = blown("brass", attack: 0.04, cutoff: 2500, swell: 2400); p.layers = [(0, -8, -250), (0, 8, 250)];
            p.attenuationDB = 3; return p
        case 62: var p = blown("saw", attack: 0.02, cutoff: 1200, swell: 3000); p.vibratoCents = 0; return p
        case 63:
            var p = blown("pulse", attack: 0.05, cutoff: 1500, swell: 2400); p.vibratoCents = 0; p.chorus = 300;
            return p
        default: preconditionFailure("program \(program) is not a brass program")  // see patch(for:)
        }
    }

    /// Programs 64–71: reeds.
    private static func reeds(_ program: Int) -> Patch {
        switch program {
        case 64: return blown("sax", cutoff: 5000)
        case 65: return blown("sax", cutoff: 3500)
        case 66: return blown("sax", cutoff: 2500)
        case 67: return blown("sax", cutoff: 1800)
        case 68: return blown("doublereed", cutoff: 5000, swell: 600)
        case 69: return blown("doublereed", cutoff: 3000, swell: 600)
        case 70: return blown("doublereed", cutoff: 1800, swell: 600)
        case 71: return blown("clarinet", cutoff: 3000, swell: 900)
        default: preconditionFailure("program \(program) is not a reed program")  // see patch(for:)
        }
    }

    /// Programs 72–79: pipes.
    private static func pipes(_ program: Int) -> Patch {
        switch program {
        case 72: var p = blown("flute", cutoff: 8000, swell: 0); p.layers = [(12, 0, 0)]; return p
        case 73: return blown("flute", cutoff: 6000, swell: 0)
        case 74: var p = blown("flute", cutoff: 4000, swell: 0); p.vibratoCents = 4; return p
        case 75: return blown("panflute", attack: 0.06, cutoff: 5000, swell: 0)
        case 76: return blown("panflute", attack: 0.1, cutoff: 3000, swell: 0)
        case 77: var p = blown("panflute", attack: 0.08, cutoff: 3500, swell: 0); p.vibratoCents = 25; return p
        case 78: var p = blown("sine", attack: 0.03, swell: 0); p.vibratoCents = 15; p.layers = [(12, 0, 0)]; return p
        case 79: var p = blown("sine", attack: 0.04, swell: 0); p.vibratoCents = 6; return p
        default: preconditionFailure("program \(program) is not a pipe program")  // see patch(for:)
        }
    }

    /// Programs 80–87: synth leads.
    private static func synthLeads(_ program: Int) -> Patch {
        switch program {
        case 80: var p = sustained("square", attack: 0.005); p.cutoff = 5000; return p
        case 81: var p = sustained("saw", attack: 0.005); p.cutoff = 5000; return p
        case 82:
            var p = blown("flute", attack: 0.02, cutoff: 6000, swell: 0); p.vibratoCents = 20;
            p.layers = [(0, 0, 0), (12, 0, 0)]; return p
        case 83: var p = sustained("chiff", attack: 0.005); p.cutoff = 4000; return p
        case 84:
            var p = sustained("overdrive", attack: 0.005); p.cutoff = 4000; p.resonanceDB = 6; p.attenuationDB = 4;
            return p
        case 85: var p = sustained("ooh", attack: 0.02); p.vibratoCents = 15; return p
        case 86:
            var p = sustained("saw", attack: 0.005); p.layers = [(0, 0, 0), (7, 0, 0)]; p.cutoff = 4000;
            p.attenuationDB = 3; return p
        case 87:
            var p = sustained("saw", attack: 0.005); p.layers = [(0, 0, 0), (-12, 0, 0)]; p.cutoff = 3000;
            p.attenuationDB = 3; return p
        default: preconditionFailure("program \(program) is not a synth lead program")  // see patch(for:)
        }
    }

    /// Programs 88–95: synth pads.
    private static func synthPads(_ program: Int) -> Patch {
        switch program {
        case 88: var p = pad("fmpiano", attack: 0.1, cutoff: 5000); p.decay = 4; p.sustainDB = 12; return p
        case 89: return pad("saw", attack: 0.6, cutoff: 1500)
        case 90:
            var p = pad("saw", attack: 0.08, cutoff: 2000); p.filterEnvelopeCents = 1800; p.modDecay = 1.5; return p
        case 91: return pad("aah", attack: 0.7, cutoff: 4000)
        case 92: var p = pad("strings", attack: 0.8, cutoff: 2500); p.tremoloCB = 40; p.tremoloHz = 0.5; return p
        case 93: return pad("metalpad", attack: 0.5, cutoff: 5000)
        case 94: var p = pad("ooh", attack: 0.8, cutoff: 3000); p.vibratoCents = 10; return p
        case 95:
            var p = pad("saw", attack: 0.5, cutoff: 600); p.filterEnvelopeCents = 3600; p.modAttack = 2; p.modDecay = 2;
            p.resonanceDB = 6; return p
        default: preconditionFailure("program \(program) is not a synth pad program")  // see patch(for:)
        }
    }

    /// Programs 96–103: synth effects.
    private static func synthEffects(_ program: Int) -> Patch {
        switch program {
        case 96: var p = pad("celesta", attack: 0.01, cutoff: 6000); p.tremoloCB = 150; p.tremoloHz = 7; return p
        case 97: return pad("metalpad", attack: 0.4, cutoff: 2500)
        case 98: var p = struck("glock", decay: 4); p.reverb = 600; p.chorus = 400; return p
        case 99: var p = pad("steel", attack: 0.05, cutoff: 4000); p.decay = 5; p.sustainDB = 15; return p
        case 100: var p = pad("tubebell", attack: 0.2, cutoff: 8000); p.vibratoCents = 15; return p
        case 101:
            var p = pad("aah", attack: 1, cutoff: 1500); p.tremoloCB = 80; p.tremoloHz = 0.7;
            p.pitchEnvelopeCents = -200; p.modAttack = 1; p.modDecay = 2; return p
        case 102: var p = pad("drawbar", attack: 0.05, cutoff: 3000); p.tremoloCB = 200; p.tremoloHz = 3; return p
        case 103:
            var p = pad("square", attack: 0.1, cutoff: 1500); p.filterEnvelopeCents = 3000; p.vibratoCents = 50;
            p.vibratoHz = 8; return p
        default: preconditionFailure("program \(program) is not a synth effect program")  // see patch(for:)
        }
    }

    /// Programs 104–111: ethnic instruments.
    private static func ethnic(_ program: Int) -> Patch {
        switch program {
        case 104: return plucked("sitar", decay: 5, cutoff: 5000)
        case 105: return plucked("steel", decay: 1.2, cutoff: 6000)
        case 106: return plucked("sitar", decay: 2.5, cutoff: 4000)
        case 107: return plucked("harpsi", decay: 3.5, cutoff: 5000)
        case 108: return struck("kalimba", decay: 1.5)
        case 109:
            var p = sustained("doublereed", attack: 0.02); p.layers = [(0, 0, 0), (-12, 0, 0)]; p.attenuationDB = 3;
            return p
        case 110: var p = bowed("strings", attack: 0.04); p.cutoff = 6000; p.vibratoCents = 18; return p
        case 111: var p = blown("doublereed", attack: 0.02, cutoff: 7000, swell: 1200); p.vibratoCents = 25; return p
        default: preconditionFailure("program \(program) is not an ethnic program")  // see patch(for:)
        }
    }

    /// Programs 112–119: percussive.
    private static func percussive(_ program: Int) -> Patch {
        switch program {
        case 112: var p = struck("glock", decay: 1.5); p.layers = [(24, 0, 0)]; return p
        case 113: var p = struck("wood", decay: 0.6); p.layers = [(12, 0, 0)]; return p
        case 114: return struck("steeldrum", decay: 2)
        case 115: var p = struck("wood", decay: 0.5); p.layers = [(24, 0, 0)]; return p
        case 116:
            var p = struck("drum", decay: 1.5, cutoff: 800); p.layers = [(-12, 0, 0)]; p.pitchEnvelopeCents = -150;
            p.modDecay = 0.2; return p
        case 117:
            var p = struck("drum", decay: 0.8, cutoff: 2000); p.pitchEnvelopeCents = -300; p.modDecay = 0.3; return p
        case 118: var p = struck("sine", decay: 0.7); p.pitchEnvelopeCents = -1200; p.modDecay = 0.4; return p
        case 119: var p = sustained("noise", attack: 1.5, release: 0.05); p.cutoff = 9000; p.fixedPitch = true; return p
        default: preconditionFailure("program \(program) is not a percussive program")  // see patch(for:)
        }
    }

    /// Programs 120–127: sound effects.
    private static func soundEffects(_ program: Int) -> Patch {
        switch program {
        case 120: var p = struck("noise", decay: 0.6, cutoff: 3000); p.hold = 0.1; p.fixedPitch = true; return p
        case 121: var p = sustained("darknoise", attack: 0.08, release: 0.3); p.cutoff = 2000; return p
        case 122:
            var p = sustained("darknoise", attack: 1, release: 1.5); p.tremoloCB = 300; p.tremoloHz = 0.15;
            p.fixedPitch = true; return p
        case 123:
            var p = sustained("sine", attack: 0.01); p.layers = [(24, 0, 0)]; p.vibratoCents = 600; p.vibratoHz = 12;
            p.vibratoDelay = 0.001; return p
        case 124:
            var p = sustained("square", attack: 0.005); p.layers = [(24, 0, 0)]; p.tremoloCB = 960; p.tremoloHz = 16;
            p.cutoff = 3000; p.attenuationDB = 4; return p
        case 125: var p = sustained("darknoise"); p.tremoloCB = 600; p.tremoloHz = 9; p.fixedPitch = true; return p
        case 126:
            var p = sustained("noise", attack: 0.5, release: 1); p.tremoloCB = 200; p.tremoloHz = 11; p.cutoff = 6000;
            p.fixedPitch = true; return p
        default:
            var p = struck("noise", decay: 1, cutoff: 4000); p.hold = 0.05; p.decayPerKey = 0; p.fixedPitch = true;
            p.attenuationDB = 0; return p
        }
    }
}
