#!/usr/bin/env python3
"""Network MIDI through a lossy link: `pianola play` sends a song to `pianola live`, through a
packet-dropping UDP relay on 127.0.0.1, and the receiver repairs what was lost from the recovery
journal (RFC 6295).

    journal_loss_tests.py PIANOLA SOUNDFONT

A private `jackd -d dummy` paces the sender (`pianola play --driver jack --midi-out-only
--rtpmidi-connect RELAY`); the receiver is `pianola live -d null --rtpmidi PORT --record
take.mid`. The relay forwards both ports both ways and drops chosen RTP-MIDI data packets: a
note-on (a single loss), a burst of five, the packet holding a note-off, the one holding the
sustain pedal's release, the one holding a program change, the one selecting RPN 0 (the
pitch-bend range) and setting it, a later Data Entry to it, and a SysEx (master volume). The
song takes a step every quarter second; from the recording, the receiver's state (notes
sounding, programs, volume, pedal, wheel, bend range, the SysEx commands received) just after
each step whose packet arrived must be the song's state after that step. With
the journals stripped by the relay (a sender without them: the receiver releases everything on a
gap) the same loss leaves it wrong, so the check can fail. The burst's run is also captured live
with tshark on the loopback interface, and Wireshark's RTP-MIDI dissector decodes the journals;
and pymidi's server (a peer that knows no journal) gets every note of the song from `play`.
Prints one line per check; exits non-zero if any failed.
"""

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "Device"))
sys.path.insert(0, os.path.join(TESTS, "Python"))
from journal_song import STEPS, State, dumped_state, expected_states, song_end_state, write_song  # noqa: E402
from midi_files import read_smf_messages  # noqa: E402
from rtpmidi_tests import free_port_pair  # noqa: E402
from temporary_folder import temporary_folder  # noqa: E402

failures = []
STEP = 0.25  # seconds per song step (120 BPM, 480 ticks a beat: 240 ticks)


def check(name, condition, detail):
    print(f"{'PASS' if condition else 'FAIL'} {name}: {detail}", flush=True)
    if not condition:
        failures.append(name)


class Relay(threading.Thread):
    """Forwards a session between the sender (who invites RELAY) and the receiver (at TARGET),
    both ports both ways, dropping the data packets that hold a step in `drops`, and when
    `strip` is set removing every packet's recovery journal. With `feedback_delay` (seconds) the
    receiver's feedback (RS) reaches the sender that much later, as over a slow link."""

    def __init__(self, target, drops, strip=False, feedback_delay=0.0):
        super().__init__(daemon=True)
        self.port = free_port_pair()
        self.front = [self.bound(self.port), self.bound(self.port + 1)]
        self.back = [self.bound(0), self.bound(0)]
        self.target, self.drops, self.strip = target, set(drops), strip
        self.feedback_delay, self.delayed = feedback_delay, []
        self.senders = [None, None]
        self.dropped, self.packets = [], 0
        self.step_sequences = {}  # step -> the RTP sequence number of the packet holding it
        self.stopping = False

    @staticmethod
    def bound(port):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", port))
        return sock

    def step_of(self, data):
        """The song step a data packet holds (its command list), or None."""
        header = data[12]
        long = header & 0x80
        length = ((header & 0x0F) << 8 | data[13]) if long else header & 0x0F
        commands = data[13 + (1 if long else 0): 13 + (1 if long else 0) + length]
        for index, step in enumerate(STEPS):
            if step[0] in commands:
                return index
        return None

    def run(self):
        sockets = self.front + self.back
        while not self.stopping:
            ready, _, _ = select.select(sockets, [], [], 0.01)
            while self.delayed and self.delayed[0][0] <= time.monotonic():
                _, data, destination = self.delayed.pop(0)
                self.front[0].sendto(data, destination)
            for sock in ready:
                data, source = sock.recvfrom(65536)
                if sock in self.front:
                    port = self.front.index(sock)
                    self.senders[port] = source
                    if port == 1 and len(data) > 13 and data[0] & 0xC0 == 0x80 and data[1] & 0x7F == 0x61:
                        self.packets += 1
                        step = self.step_of(data)
                        if step is not None:
                            self.step_sequences[step] = data[2] << 8 | data[3]
                        if step in self.drops:
                            self.dropped.append(step)
                            continue
                        if self.strip and data[12] & 0x40:
                            header = data[12]
                            long = header & 0x80
                            length = ((header & 0x0F) << 8 | data[13]) if long else header & 0x0F
                            end = 13 + (1 if long else 0) + length
                            data = data[:12] + bytes([header & ~0x40]) + data[13:end]
                    self.back[port].sendto(data, ("127.0.0.1", self.target + port))
                else:
                    port = self.back.index(sock)
                    if self.senders[port] is None:
                        continue
                    if port == 0 and self.feedback_delay and data[:4] == b"\xff\xffRS":
                        self.delayed.append((time.monotonic() + self.feedback_delay, data, self.senders[port]))
                        continue
                    self.front[port].sendto(data, self.senders[port])

    def stop(self):
        self.stopping = True
        self.join(timeout=5)
        for sock in self.front + self.back:
            sock.close()


def start_jack():
    name = f"pianola-journal-{os.getpid()}"
    environment = dict(os.environ, JACK_NO_AUDIO_RESERVATION="1")
    server = subprocess.Popen(["jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "1024"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    for _ in range(100):
        listed = subprocess.run(["jack_lsp", "-s", name], capture_output=True, text=True, env=environment)
        if "system:playback_1" in listed.stdout:
            return server, name
        time.sleep(0.05)
    server.terminate()
    raise SystemExit("jackd did not start (scripts/install-deps --test installs jackd2)")


def start_capture(port, path):
    """tshark capturing, on the loopback interface, the datagrams sent to `port` (the relay's data
    port: the sender's RTP-MIDI packets, before the relay drops any); None without tshark or the
    right to capture (said)."""
    if shutil.which("tshark") is None:
        print("SKIP live capture: no tshark (Debian tshark; scripts/install-deps --test installs it)")
        return None
    log_path = path + ".log"
    log = open(log_path, "w")
    capture = subprocess.Popen(["tshark", "-i", "lo", "-f", f"udp dst port {port}", "-w", path],
                               stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and capture.poll() is None and "Capturing on" not in open(log_path).read():
        time.sleep(0.05)
    if capture.poll() is not None:
        print(f"SKIP live capture: tshark cannot capture here: {open(log_path).read().strip()[-200:]}")
        return None
    return capture


def decode_capture(path, port):
    """tshark's RTP-MIDI fields of each captured packet: (sequence, checkpoint, channels, programs,
    logged notes, malformed, chapter M's ENTRY-MSB values)."""
    fields = ["rtp.seq", "rtpmidi.check_Seq_num", "rtpmidi.chanjour_channel", "rtpmidi.cj_chapter_p_program",
              "rtpmidi.cj_chapter_n_log_note", "_ws.malformed", "rtpmidi.cj_chapter_m_log_msb"]
    result = subprocess.run(
        ["tshark", "-r", path, "-d", f"udp.port=={port},rtp", "-d", "rtp.pt==97,rtpmidi", "-T", "fields",
         "-E", "separator=;", "-E", "occurrence=a", "-E", "aggregator=,"] + [item for field in fields
                                                                            for item in ("-e", field)],
        capture_output=True, text=True, timeout=60)

    def numbers(text):
        return [int(value, 16) if value.startswith("0x") else int(value) for value in text.split(",") if value]

    packets = []
    for line in result.stdout.splitlines():
        parts = line.split(";")
        if len(parts) == len(fields) and parts[0]:
            packets.append((int(parts[0]), numbers(parts[1]), numbers(parts[2]), numbers(parts[3]),
                            numbers(parts[4]), parts[5] != "", numbers(parts[6])))
    return packets


def run_through_relay(pianola, font, work, song, name, drops, strip=False, capture_path=None):
    """The song from play to live through a relay dropping `drops`; the recorded messages with
    their times in seconds, the steps the relay dropped, and the receiver's state dump (`live
    --rtpmidi-state`: the session's state when it ended). With `capture_path`, tshark captures
    the sender's packets to the relay there (the capture's data port is `relay.port + 1`)."""
    port = free_port_pair()
    take = os.path.join(work, f"{name}.mid")
    state_path = os.path.join(work, f"{name}-state.json")
    log_path = os.path.join(work, f"{name}-live.err")
    log = open(log_path, "w")
    receiver = subprocess.Popen(
        [pianola, "live", "-d", "null", "-s", font, "--rtpmidi", f"127.0.0.1:{port}", "--no-mdns", "--record", take,
         "--rtpmidi-state", state_path],
        stdout=subprocess.DEVNULL, stderr=log)
    # Ready when it says it takes sessions (a busy machine may take seconds to load the font).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "MIDI input: network sessions" not in open(log_path).read():
        time.sleep(0.05)
    # The captured run's feedback is slowed (0.2 s): a packet follows each step (its guard) before
    # the receiver's acknowledgement could trim the step from the journal.
    relay = Relay(port, drops, strip, feedback_delay=0.2 if capture_path else 0.0)
    relay.start()
    capture = start_capture(relay.port + 1, capture_path) if capture_path else None
    try:
        sender = subprocess.run(
            [pianola, "play", song, "-q", "--driver", "jack", "--no-autoconnect", "-s", font, "--midi-out-only",
             "--rtpmidi-connect", f"127.0.0.1:{relay.port}"],
            capture_output=True, text=True, timeout=60, env=dict(os.environ, JACK_DEFAULT_SERVER=JACK_NAME))
        check(f"{name}: play ran", sender.returncode == 0, sender.stderr.strip()[-300:] or "exit 0")
    finally:
        time.sleep(0.3)
        receiver.send_signal(signal.SIGINT)
        receiver.wait(timeout=20)
        if capture:
            capture.send_signal(signal.SIGINT)
            capture.wait(timeout=20)
        relay.stop()
        log.close()
    messages = [(tick / 3840.0, bytes(message)) for tick, message in read_smf_messages(take)]
    if capture_path:
        RELAY_DATA_PORT[capture_path] = (relay.port + 1, relay.step_sequences) if capture else None
    state = json.load(open(state_path)) if os.path.exists(state_path) else None
    return messages, relay.dropped, state


RELAY_DATA_PORT = {}


def check_capture(path):
    """The sender's packets, captured live and decoded by tshark: each carries a journal tshark
    reads without fault, and the journals hold the song's state (program 34 on channel 2, bass
    note 40) as the RFC lays it out. Chapter M is checked packet by packet against the packet's
    own checkpoint: a packet whose history holds the RPN's step (17) and not yet step 19 codes
    bend range 12, one whose history holds either and follows step 19 codes 2, any other none
    (the receiver had acknowledged them)."""
    port, sequences = RELAY_DATA_PORT.get(path) or (None, None)
    if port is None:
        return
    packets = decode_capture(path, port)
    with_journal = [packet for packet in packets if packet[1]]
    malformed = [packet[0] for packet in packets if packet[5]]
    programs = {program for packet in with_journal for program in packet[3]}
    notes = {note for packet in with_journal for note in packet[4]}
    song_notes = {message[1] for step in STEPS for message in step if message[0] & 0xF0 == 0x90}
    check("a live capture of the test's packets: tshark decodes every journal, without a fault",
          len(packets) >= len(STEPS) and len(with_journal) >= len(packets) - 1 and not malformed,
          f"{len(packets)} RTP-MIDI packets captured, {len(with_journal)} with a journal, malformed: {malformed}")
    check("the captured journals hold the song's state: program 34 (channel 2), bass note 40",
          34 in programs and 40 in notes and notes <= song_notes,
          f"programs {sorted(programs)}, logged notes {sorted(notes)}")
    rpn, second = sequences.get(17), sequences.get(19)
    if rpn is None or second is None:
        check("chapter M: the relay saw the RPN's packets", False, f"steps seen {sorted(sequences)}")
        return

    def newer(a, b):  # sequence number a follows b (16 bits, wrapping)
        return 0 < (a - b) & 0xFFFF < 0x8000

    def covers(packet, sequence):  # the packet's history (checkpoint onwards) holds `sequence`
        return bool(packet[1]) and not newer(packet[1][0], sequence) and newer(packet[0], sequence)

    wrong, coded = [], []
    for packet in with_journal:
        if covers(packet, second) or (covers(packet, rpn) and newer(packet[0], second)):
            wanted = [2]
        elif covers(packet, rpn):
            wanted = [12]
        else:
            wanted = []
        coded += wanted
        if packet[6] != wanted:
            wrong.append((packet[0], packet[1][0], packet[6], wanted))
    check("chapter M in each captured packet is the bend range its history holds: 12, then 2",
          not wrong and 12 in coded and 2 in coded,
          f"RPN in packet {rpn}, bend range 2 in {second}; {coded.count(12)} packets coded 12, "
          f"{coded.count(2)} coded 2; wrong (seq, checkpoint, coded, wanted): {wrong}")


def compare(messages, dropped):
    """The steps (whose packet arrived) after which the receiver's state was not the song's, and
    the number compared. Each step is checked just after its packet's messages were delivered (a
    packet's repairs come before them) and before the next step's: the moment follows the step's
    own arrival, so that the sender's clock slipping (a dummy JACK server that fell behind) does
    not move later steps out of a window fixed at the start."""
    arrivals, last = {}, None
    for index, step in enumerate(STEPS):
        if index in dropped:
            continue
        # The step's first message at or after the previous step's (a repair may have sent the same bytes earlier).
        times = [time_ for time_, message in messages if message == step[0] and (last is None or time_ >= last)]
        if times:
            arrivals[index] = last = times[0]
    if not arrivals:
        return None, 0
    wrong, compared = [], 0
    for index in range(1, len(STEPS)):
        if index in dropped:
            continue
        compared += 1
        if index not in arrivals:
            wrong.append(index)
            continue
        later = [arrivals[next_] for next_ in arrivals if next_ > index]
        moment = min([arrivals[index] + STEP * 0.4] + [time_ - 0.001 for time_ in later[:1]])
        state = State()
        for time_, message in messages:
            if time_ <= moment:
                state.apply(message)
        if state.key() != EXPECTED[index]:
            wrong.append(index)
    return wrong, compared


def pymidi_receiver_test(pianola, font, song):
    """pymidi's server (PyPI), a peer that knows no recovery journal, as the receiver of `play`:
    it parses each packet's command list and skips the journal, and gets every note of the song."""
    import logging
    import threading
    from pymidi import server as pymidi_server

    logging.getLogger("pymidi").setLevel(logging.CRITICAL)
    received = []

    class Handler(pymidi_server.Handler):
        def on_peer_connected(self, peer):
            pass

        def on_peer_disconnected(self, peer):
            pass

        def on_midi_commands(self, peer, commands):
            for command in commands:
                params = command.params
                received.append((command.command, {"key": getattr(params, "key", None),
                                                   "velocity": getattr(params, "velocity", 0)}))

    port = free_port_pair()
    server = pymidi_server.Server([("127.0.0.1", port)])
    server.add_handler(Handler())
    server._init_protocols()
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                server._loop_once(timeout=0.1)
            except Exception as error:  # a packet pymidi cannot parse would end up here
                received.append(("error", {"what": repr(error)}))
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        sender = subprocess.run(
            [pianola, "play", song, "-q", "--driver", "jack", "--no-autoconnect", "-s", font, "--midi-out-only",
             "--rtpmidi-connect", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=60, env=dict(os.environ, JACK_DEFAULT_SERVER=JACK_NAME))
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(timeout=5)
    expected = [(data[1], data[2]) for step in STEPS for data in step if data[0] & 0xF0 == 0x90 and data[2] > 0]
    notes_on = [(int(params["key"]), params["velocity"]) for command, params in received
                if command == "note_on" and (params["velocity"] or 0) > 0]
    errors = [params for command, params in received if command == "error"]
    check("a journal-less peer (pymidi's server) gets every note of the song from play",
          sender.returncode == 0 and notes_on == expected and not errors,
          f"play exit {sender.returncode}, notes on {notes_on} (wanted {expected}), parse errors {errors[:2]}")


EXPECTED = expected_states()
JACK_NAME = ""


def main():
    global JACK_NAME
    pianola, font = sys.argv[1], sys.argv[2]
    with temporary_folder("journal") as work:
        song = os.path.join(work, "steps.mid")
        write_song(song)
        server, JACK_NAME = start_jack()
        try:
            patterns = [("a note-on lost", [6]), ("a burst of 5", [3, 4, 5, 6, 7]), ("the note-off's packet", [10]),
                        ("the pedal release's packet", [8]), ("the program change's packet", [7]),
                        ("the RPN's packet (bend range: chapter M)", [17]),
                        ("a Data Entry to the selected RPN", [19]),
                        ("the SysEx's packet (master volume: chapter X)", [22])]
            capture_path = os.path.join(work, "burst.pcap")
            for name, drops in patterns:
                # The burst's run is captured live (tshark on the loopback interface) and decoded.
                path = capture_path if len(drops) > 1 else None
                messages, dropped, report = run_through_relay(pianola, font, work, song, name.replace(" ", "-"),
                                                              drops, capture_path=path)
                if path:
                    check_capture(path)
                check(f"{name}: the relay dropped it", sorted(dropped) == sorted(drops), f"dropped steps {dropped}")
                wrong, compared = compare(messages, set(dropped))
                check(f"{name}: the receiver is in the song's state in every step that arrived",
                      wrong == [] and compared >= len(STEPS) - 1 - len(drops),
                      f"{compared} steps compared, wrong in {wrong}")
                dumped = dumped_state(report)
                check(f"{name}: the receiver's state dump at the session's end is the song's",
                      dumped == song_end_state() and report["sessions"][0]["repairedGaps"] >= 1,
                      f"dumped {dumped}, repaired gaps {report and report['sessions'] and report['sessions'][0]['repairedGaps']}")
            pymidi_receiver_test(pianola, font, song)
            # Without journals (the relay strips them) the same single loss leaves the receiver wrong.
            messages, dropped, _ = run_through_relay(pianola, font, work, song, "stripped", [6], strip=True)
            wrong, compared = compare(messages, set(dropped))
            check("without the journal, releasing everything on the gap is wrong", wrong not in (None, []),
                  f"{compared} steps compared, wrong in {wrong}")
            messages, dropped, report = run_through_relay(pianola, font, work, song, "stripped-rpn", [19], strip=True)
            wrong, compared = compare(messages, set(dropped))
            check("without the journal, a lost Data Entry leaves the bend range wrong", wrong not in (None, []),
                  f"{compared} steps compared, wrong in {wrong}")
            check("without the journal, the state dump at the end is not the song's (the bend range)",
                  dumped_state(report) not in (None, song_end_state()), f"dumped {dumped_state(report)}")
        finally:
            server.terminate()
            server.wait(timeout=20)
        print(f"{len(failures) == 0 and 'journal loss tests: all passed' or f'journal loss tests: {len(failures)} failed'}")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
