"""The song `journal_loss_tests.py` sends through its lossy relay, and the model of what a MIDI
stream leaves in effect that its checks compare: notes sounding, programs, volume and pedal,
wheels, RPN and NRPN values and the selection, SysEx commands received."""

import struct

# The song, step by step (channel 1 and 2, as bytes); each step is one moment, so one packet.
STEPS = [
    [b"\xC0\x00", b"\xB0\x07\x64", b"\xC1\x21"],  # 0: programs, volume
    [b"\x90\x3C\x50"],  # 1: 60 on
    [b"\xB0\x40\x7F"],  # 2: pedal down
    [b"\x80\x3C\x00"],  # 3: 60 off (held by the pedal)
    [b"\x91\x28\x5A"],  # 4: bass 40 on
    [b"\xE1\x00\x60"],  # 5: wheel up
    [b"\x90\x40\x46"],  # 6: 64 on
    [b"\xC1\x22"],  # 7: program 34 on channel 2
    [b"\xB0\x40\x00"],  # 8: pedal up (60 stops)
    [b"\x81\x28\x00"],  # 9: bass off
    [b"\x80\x40\x00"],  # 10: 64 off
    [b"\xB0\x07\x5A"],  # 11: volume 90
    [b"\x90\x43\x3C"],  # 12: 67 on
    [b"\x91\x2B\x64"],  # 13: bass 43 on
    [b"\x80\x43\x00"],  # 14: 67 off
    [b"\xE1\x00\x40"],  # 15: wheel centre
    [b"\x81\x2B\x00"],  # 16: bass off
    [b"\xB1\x65\x00", b"\xB1\x64\x00", b"\xB1\x06\x0C"],  # 17: RPN 0 (bend range) 12 on channel 2
    [b"\xE1\x00\x70"],  # 18: wheel up
    [b"\xB1\x06\x02"],  # 19: bend range 2 (RPN 0 still selected)
    [b"\x91\x2D\x50"],  # 20: bass 45 on
    [b"\x81\x2D\x00"],  # 21: bass off
    [b"\xF0\x7F\x7F\x04\x01\x00\x50\xF7"],  # 22: master volume (a SysEx)
    [b"\x91\x30\x50"],  # 23: bass 48 on
    [b"\x81\x30\x00"],  # 24: bass off
]


def write_song(path):
    """STEPS as a format-0 file, a step every 240 ticks (a quarter second at 120 BPM)."""
    track = b""
    for index, step in enumerate(STEPS):
        for position, message in enumerate(step):
            delta = 240 if index > 0 and position == 0 else 0
            track += bytes([0x81, 0x70]) if delta == 240 else b"\x00"
            # A SysEx event: F0, its length, the octets after F0 (through F7).
            track += b"\xF0" + bytes([len(message) - 1]) + message[1:] if message[0] == 0xF0 else message
    track += b"\x81\x70\xFF\x2F\x00"
    with open(path, "wb") as file:
        file.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)


class State:
    """What a MIDI stream left in effect: notes sounding, controllers, programs, wheels, the RPN
    and NRPN values Data Entry set (MSB and LSB) and the parameter selected on each channel, the
    SysEx commands received."""

    def __init__(self):
        self.notes, self.controllers, self.programs, self.wheels = set(), {}, {}, {}
        self.selection, self.parameters, self.sysex = {}, {}, []

    def apply(self, message):
        status, channel = message[0] & 0xF0, message[0] & 0x0F
        if message[0] == 0xF0:
            self.sysex.append(bytes(message))
        elif status == 0x90 and message[2] > 0:
            self.notes.add((channel, message[1]))
        elif status in (0x80, 0x90):
            self.notes.discard((channel, message[1]))
        elif status == 0xB0:
            controller, value = message[1], message[2]
            self.controllers[(channel, controller)] = value
            # RPN MSB/LSB, NRPN MSB/LSB registers, and whether the NRPN was selected last.
            selection = self.selection.setdefault(channel, [127, 127, 127, 127, False])
            if controller in (101, 100, 99, 98):
                selection[[101, 100, 99, 98].index(controller)] = value
                selection[4] = controller in (99, 98)
            elif controller == 121:
                self.selection[channel] = [127, 127, 127, 127, False]
            elif controller in (6, 38) and self.selected(channel) is not None:
                key = (channel,) + self.selected(channel)
                msb, lsb = self.parameters.get(key, (None, None))
                self.parameters[key] = (value, None) if controller == 6 else (msb, value)
            if controller in (120, 123):
                self.notes = {note for note in self.notes if note[0] != channel}
        elif status == 0xC0:
            self.programs[channel] = message[1]
        elif status == 0xE0:
            self.wheels[channel] = message[1] | message[2] << 7

    def selected(self, channel):
        """("rpn" or "nrpn", number) Data Entry goes to on `channel`, or None."""
        selection = self.selection.get(channel, [127, 127, 127, 127, False])
        msb, lsb = selection[2:4] if selection[4] else selection[0:2]
        return None if (msb, lsb) == (127, 127) else ("nrpn" if selection[4] else "rpn", msb << 7 | lsb)

    def key(self):
        # Volume and pedal only (the receiver's releases send other controllers too: 66 at the end).
        controllers = {key: value for key, value in self.controllers.items() if key[1] in (7, 64)}
        selected = sorted((channel,) + self.selected(channel) for channel in self.selection
                          if self.selected(channel) is not None)
        return (sorted(self.notes), sorted(controllers.items()), sorted(self.programs.items()),
                sorted(self.wheels.items()), sorted(self.parameters.items()), selected, tuple(self.sysex))


def expected_states():
    state, states = State(), []
    for step in STEPS:
        for message in step:
            state.apply(message)
        states.append(state.key())
    return states


def dumped_state(report):
    """The song's state as the receiver's state dump gives it (the one session's channels), in
    `State.key()`'s form, with the number of SysEx commands for their list; None without
    exactly one session."""
    if report is None or len(report["sessions"]) != 1:
        return None
    session = report["sessions"][0]
    channels = {channel["channel"] - 1: channel for channel in session["channels"]}
    notes = sorted((number, note) for number, channel in channels.items() for note in channel["notes"])
    controllers = sorted(((number, int(controller)), value) for number, channel in channels.items()
                         for controller, value in channel["controllers"].items() if int(controller) in (7, 64))
    programs = sorted((number, channel["program"]) for number, channel in channels.items()
                      if channel.get("program") is not None)
    wheels = sorted((number, channel["pitchWheel"]) for number, channel in channels.items()
                    if channel.get("pitchWheel") is not None)
    parameters = sorted(((number, parameter["kind"], parameter["number"]), (parameter.get("msb"), parameter.get("lsb")))
                        for number, channel in channels.items() for parameter in channel["parameters"])
    selected = sorted((number, channel["selectedParameter"]["kind"], channel["selectedParameter"]["number"])
                      for number, channel in channels.items() if channel.get("selectedParameter"))
    return (notes, controllers, programs, wheels, parameters, selected, session["sysExCount"])


def song_end_state():
    """What the whole song leaves, in `dumped_state`'s form."""
    state = State()
    for step in STEPS:
        for message in step:
            state.apply(message)
    key = state.key()
    return key[:-1] + (len(key[-1]),)
