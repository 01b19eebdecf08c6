#!/usr/bin/env python3
"""Network MIDI (RTP-MIDI / AppleMIDI) against a real peer on loopback.

    rtpmidi_tests.py PIANOLA SOUNDFONT

Starts `pianola live --rtpmidi 127.0.0.1:PORT` (audio to ALSA's null device, recording to a MIDI
file) and plays the other side of the session with PyPI pymidi's packet classes, through real
sockets: invitations on both ports, clock sync, a few notes and messages, BY, junk datagrams on
both ports, SIGTERM. Then it reads the recording: what was played must be there in order, and no
note left sounding. Then pianola as the initiator (`--rtpmidi-connect`): to pymidi's own server
(handshake, clock sync, what the server sends played and recorded, BY on exit), to another
pianola, to one that refuses, and to a port where nobody answers; and the mDNS advertisement.
The protocol's details without a peer process (running status, delta times, SysEx segments,
losses, duplicates, receiver feedback, timeouts, BY with a note held, macOS's captured packets,
fuzzing) are Swift tests on the session state machine (Tests/MIDIIOTests).
Prints one line per check; exits non-zero if any failed.
"""

import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

from pymidi import packets

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "Device"))
sys.path.insert(0, os.path.join(TESTS, "Python"))
from device_tests import read_smf_messages  # noqa: E402
from temporary_folder import temporary_folder  # noqa: E402

failures = []


def check(name, condition, detail):
    print(f"{'PASS' if condition else 'FAIL'} {name}: {detail}", flush=True)
    if not condition:
        failures.append(name)


def free_port_pair():
    while True:
        port = random.randrange(20000, 60000, 2)
        sockets = []
        try:
            for offset in (0, 1):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("127.0.0.1", port + offset))
                sockets.append(s)
            return port
        except OSError:
            pass
        finally:
            for s in sockets:
                s.close()


class Peer:
    """The initiator: a control and a data socket on consecutive ports, as Apple's peers have."""

    def __init__(self, target_port, name, ssrc):
        self.target = target_port
        self.name = name
        self.ssrc = ssrc
        self.token = random.getrandbits(32)
        port = free_port_pair()
        self.control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.control.bind(("127.0.0.1", port))
        self.data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.data.bind(("127.0.0.1", port + 1))
        for s in (self.control, self.data):
            s.settimeout(3)
        self.sequence = random.getrandbits(16)

    def invite(self):
        replies = []
        for s, port in ((self.control, self.target), (self.data, self.target + 1)):
            s.sendto(packets.AppleMIDIExchangePacket.build(dict(
                command=b"IN", protocol_version=2, initiator_token=self.token, ssrc=self.ssrc, name=self.name)),
                ("127.0.0.1", port))
            replies.append(packets.AppleMIDIExchangePacket.parse(s.recvfrom(1024)[0]))
        return replies

    def sync(self):
        t1 = int(time.monotonic() * 10000)
        self.data.sendto(packets.AppleMIDITimestampPacket.build(dict(
            command=b"CK", ssrc=self.ssrc, count=0, unknown1=b"\0\0\0", timestamp_1=t1, timestamp_2=0,
            timestamp_3=0)), ("127.0.0.1", self.target + 1))
        reply = packets.AppleMIDITimestampPacket.parse(self.data.recvfrom(1024)[0])
        t3 = int(time.monotonic() * 10000)
        self.data.sendto(packets.AppleMIDITimestampPacket.build(dict(
            command=b"CK", ssrc=self.ssrc, count=2, unknown1=b"\0\0\0", timestamp_1=t1,
            timestamp_2=reply.timestamp_2, timestamp_3=t3)), ("127.0.0.1", self.target + 1))
        return t1, reply

    def send(self, midi, journal=b"", skip=0, raw=None):
        """An RTP-MIDI packet with this command list (bytes), optionally after skipping sequence numbers."""
        self.sequence = (self.sequence + 1 + skip) & 0xFFFF
        packet = raw if raw is not None else rtp_midi_packet(self.sequence, self.ssrc, midi, journal)
        self.data.sendto(packet, ("127.0.0.1", self.target + 1))

    def bye(self):
        self.control.sendto(struct.pack("!2s2sIII", b"\xff\xff", b"BY", 2, self.token, self.ssrc),
                            ("127.0.0.1", self.target))

    def close(self):
        self.control.close()
        self.data.close()


def rtp_midi_packet(sequence, ssrc, midi, journal=b""):
    """An RTP-MIDI data packet: RTP header (payload type 0x61), MIDI command section, journal."""
    header = struct.pack("!BBHII", 0x80, 0x61, sequence, int(time.monotonic() * 10000) & 0xFFFFFFFF, ssrc)
    flags = 0x40 if journal else 0
    if len(midi) < 16:
        section = bytes([flags | len(midi)])
    else:
        section = bytes([0x80 | flags | len(midi) >> 8, len(midi) & 0xFF])
    return header + section + midi + journal


def wait_for(pattern, stream, timeout=20):
    deadline = time.time() + timeout
    seen = ""
    while time.time() < deadline:
        line = stream.readline()
        if not line:
            time.sleep(0.05)
            continue
        seen += line
        if re.search(pattern, line):
            return seen
    return seen


def main():
    pianola, font = sys.argv[1], sys.argv[2]
    with temporary_folder("rtpmidi") as work:
        recording = os.path.join(work, "network.mid")
        port = free_port_pair()
        log_path = os.path.join(work, "live.err")
        log = open(log_path, "w")
        process = subprocess.Popen(
            [pianola, "live", "-d", "null", "-s", font, "--rtpmidi", f"127.0.0.1:{port}", "--no-mdns", "--rtpmidi-timeout", "2",
             "--record", recording], stdout=subprocess.DEVNULL, stderr=log)
        reader = open(log_path)
        ready = wait_for(r"network sessions on", reader)
        check("listening", "network sessions on 127.0.0.1:" in ready, ready.strip().splitlines()[-1:] or "no output")

        expected = []  # (description, bytes) in the order the recording must hold them

        # A session: invitations on both ports, then clock sync.
        peer = Peer(port, "pytest session", random.getrandbits(32))
        replies = peer.invite()
        check("invitation accepted on both ports",
              all(r.command == b"OK" and r.initiator_token == peer.token for r in replies),
              f"{[(r.command, r.name) for r in replies]}")
        t1, reply = peer.sync()
        check("clock sync answered", reply.command == b"CK" and reply.count == 1 and reply.timestamp_1 == t1
              and reply.timestamp_2 > 0, f"count {reply.count}, t1 echoed {reply.timestamp_1 == t1}")

        # What a peer plays reaches the recording through the sockets (the protocol's details —
        # running status, delta times, SysEx segments, losses, duplicates, receiver feedback,
        # timeouts, BY with a note held, macOS's captured packets, fuzzing — are checked on the
        # session state machine itself: Tests/MIDIIOTests/RTPMIDISession*Tests.swift).
        peer.send(bytes([0x90, 60, 100]))
        expected.append(bytes([0x90, 60, 100]))
        peer.send(bytes([0x90, 62, 49, 0x0A, 64, 59]))  # NoteOn 62, delta 1 ms, running status NoteOn 64
        expected += [bytes([0x90, 62, 49]), bytes([0x90, 64, 59])]
        peer.send(bytes([0xC1, 0x30, 0x00, 0xE1, 0x00, 0x50, 0x00, 0xB1, 0x07, 0x64]))
        expected += [bytes([0xC1, 0x30]), bytes([0xE1, 0x00, 0x50]), bytes([0xB1, 0x07, 0x64])]
        peer.send(bytes([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]))
        expected.append(bytes([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]))
        peer.send(bytes([0x80, 60, 0, 0x00, 0x90, 62, 0, 0x00, 64, 0]))
        expected += [bytes([0x80, 60, 0]), bytes([0x90, 62, 0]), bytes([0x90, 64, 0])]
        time.sleep(0.2)
        peer.bye()
        peer.close()
        seen = wait_for(r"ended: pytest session", reader, timeout=5)
        check("BY ends the session", "ended: pytest session" in seen, seen.strip().splitlines()[-1:] or "nothing")

        # Junk on both ports through the real sockets (empty and truncated datagrams, an RTP packet on
        # the control port, a broken session command): dropped and counted, nothing crashes.
        junk = Peer(port, "junk", random.getrandbits(32))
        junk.invite()
        valid = rtp_midi_packet(1, junk.ssrc, bytes([0x90, 61, 1]))
        for data, target in ((b"", port), (b"", port + 1), (valid, port), (valid[:9], port + 1),
                             (b"\xff\xffIN\x00", port), (b"\xff\xffCK" + bytes(5), port + 1)):
            junk.data.sendto(data, ("127.0.0.1", target))
        time.sleep(0.3)
        junk.bye()
        junk.close()
        alive = process.poll() is None
        check("malformed datagrams: still running", alive, f"exit status {process.poll()}")

        # A new session after them works.
        after = Peer(port, "after the junk", random.getrandbits(32))
        replies = after.invite()
        check("a new session after the junk", all(r.command == b"OK" for r in replies), "")
        after.send(bytes([0x90, 75, 70, 0x00, 0x80, 75, 0]))
        expected += [bytes([0x90, 75, 70]), bytes([0x80, 75, 0])]
        time.sleep(0.2)
        after.bye()
        after.close()
        time.sleep(0.2)

        process.terminate()
        status = process.wait(timeout=20)
        log.close()
        output = open(log_path).read()
        check("stops cleanly on SIGTERM", status == 0, f"status {status}: {output.strip().splitlines()[-1:]}")
        malformed = re.findall(r"(\d+) network packets? dropped \(malformed", output)
        check("malformed packets counted", bool(malformed) and int(malformed[-1]) > 0, f"{malformed}")

        recorded = [message for _, message in read_smf_messages(recording)] if os.path.exists(recording) else []
        check("the recording holds what was played, in order", recorded == expected,
              f"{len(recorded)} recorded, {len(expected)} expected"
              + ("" if recorded == expected else f"; first difference at {next((i for i, (a, b) in enumerate(zip(recorded, expected)) if a != b), min(len(recorded), len(expected)))}: {[m.hex() for m in recorded[:40]]}"))
        sounding = set()
        for message in recorded:
            key = (message[0] & 0x0F, message[1]) if len(message) > 1 else None
            if message[0] & 0xF0 == 0x90 and message[2] > 0:
                sounding.add(key)
            elif message[0] & 0xF0 in (0x80, 0x90):
                sounding.discard(key)
        check("no note left sounding", not sounding, f"sounding at the end: {sorted(sounding)}")

        initiator_tests(pianola, font, work)
        mdns_tests(pianola, font, work)

        if failures:
            print(f"network tests: FAILED: {', '.join(failures)} (PIANOLA_KEEP_TEST_FILES=1 keeps the files)")
            return 1
        print("network tests: all passed")
        return 0


def mdns_tests(pianola, font, work):
    """The --rtpmidi session advertised over mDNS through avahi: browsed with avahi-browse (on a
    private D-Bus and avahi daemon, loopback only, unless the system runs avahi), withdrawn on exit;
    --no-mdns; no daemon: a note, and the session runs on."""
    tools = ["dbus-daemon", "avahi-daemon", "avahi-browse", "avahi-publish-service"]
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        print(f"SKIP mDNS: {', '.join(missing)} not installed (scripts/install-deps --test installs them)")
        return
    environment = dict(os.environ)
    daemons = []

    def browse():
        result = subprocess.run(["avahi-browse", "-rpt", "_apple-midi._udp"], env=environment,
                                capture_output=True, text=True, timeout=20)
        return result.stdout + result.stderr

    try:
        if "Daemon not running" in browse() or "Failed to create client" in browse():
            # A private system bus and avahi daemon, on loopback only.
            bus = os.path.join(work, "bus")
            with open(os.path.join(work, "dbus.conf"), "w") as f:
                f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={bus}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
<allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
<allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/>
<allow receive_type="error"/></policy></busconfig>
""")
            with open(os.path.join(work, "avahi.conf"), "w") as f:
                f.write("[server]\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=lo\nenable-dbus=yes\n"
                        "[publish]\npublish-workstation=no\n")
            daemons.append(subprocess.Popen(["dbus-daemon", "--nofork", "--config-file",
                                             os.path.join(work, "dbus.conf")]))
            for _ in range(50):
                if os.path.exists(bus):
                    break
                time.sleep(0.1)
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={bus}"
            avahi_log = open(os.path.join(work, "avahi.log"), "w")
            daemons.append(subprocess.Popen(
                ["avahi-daemon", "--no-drop-root", "--no-chroot", "--no-rlimits", "-f",
                 os.path.join(work, "avahi.conf")], env=environment, stdout=avahi_log, stderr=avahi_log))
            started = ""
            for _ in range(100):
                started = open(os.path.join(work, "avahi.log")).read()
                if "Server startup complete" in started or daemons[-1].poll() is not None:
                    break
                time.sleep(0.1)
            if "Server startup complete" not in started:
                check("mDNS: a private avahi daemon starts", False, started.strip().splitlines()[-1:])
                return

        # (A session listening on loopback alone is not advertised: bound to every address here,
        # while the private avahi daemon publishes on loopback only.)
        port = free_port_pair()
        process, reader, log = start_live(
            pianola, font, work, "mdns", ["--rtpmidi", f"0.0.0.0:{port}"], environment)
        seen = wait_for(r"advertised over mDNS|not advertised", reader)
        check("mDNS: the session is advertised", "advertised over mDNS as 'Pianola'" in seen,
              seen.strip().splitlines()[-1:])
        found = [line for line in browse().splitlines() if line.startswith("=") and f";{port};" in line]
        check("mDNS: avahi-browse finds it (_apple-midi._udp, its name and port)",
              any(";Pianola;_apple-midi._udp;" in line for line in found), f"{found}")
        process.terminate()
        check("mDNS: stops cleanly", process.wait(timeout=20) == 0, "")
        time.sleep(1)
        left = [line for line in browse().splitlines() if f";{port};" in line]
        check("mDNS: withdrawn on exit", not left, f"{left}")
        log.close()

        quiet_port = free_port_pair()
        process, reader, log = start_live(
            pianola, font, work, "no-mdns", ["--rtpmidi", f"0.0.0.0:{quiet_port}", "--no-mdns"], environment)
        wait_for(r"network sessions on", reader)
        time.sleep(1)
        found = [line for line in browse().splitlines() if f";{quiet_port};" in line]
        process.terminate()
        process.wait(timeout=20)
        log.close()
        check("mDNS: --no-mdns advertises nothing", not found, f"{found}")

        dead = dict(environment, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={os.path.join(work, 'no-bus')}")
        process, reader, log = start_live(
            pianola, font, work, "no-avahi", ["--rtpmidi", f"0.0.0.0:{free_port_pair()}"], dead)
        seen = wait_for(r"not advertised", reader)
        time.sleep(0.3)
        running = process.poll() is None
        process.terminate()
        status = process.wait(timeout=20)
        log.close()
        loopback = start_live(pianola, font, work, "loopback-mdns", ["--rtpmidi", f"127.0.0.1:{free_port_pair()}"],
                              environment)
        seen_loopback = wait_for(r"not advertised|advertised over", loopback[1])
        loopback[0].terminate()
        loopback[0].wait(timeout=20)
        loopback[2].close()
        check("mDNS: a session on loopback only is not advertised", "listens on loopback only" in seen_loopback,
              seen_loopback.strip().splitlines()[-1:])
        check("mDNS: no daemon is a note, and the session runs on",
              "note: network MIDI: not advertised over mDNS:" in seen and running and status == 0,
              seen.strip().splitlines()[-1:])
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()


def start_live(pianola, font, work, name, arguments, environment=None):
    """`pianola live` on ALSA's null device with these arguments; returns the process, a reader of
    its standard error, and that file."""
    log_path = os.path.join(work, f"{name}.err")
    log = open(log_path, "w")
    process = subprocess.Popen([pianola, "live", "-d", "null", "-s", font] + arguments,
                               stdout=subprocess.DEVNULL, stderr=log, env=environment)
    return process, open(log_path), log


def initiator_tests(pianola, font, work):
    """`--rtpmidi-connect`: pianola opens the session, to pymidi's server (a real peer, in a thread
    here) and to another pianola; refused and unanswered invitations."""
    import logging
    import threading
    from pymidi import server as pymidi_server
    from pymidi import protocol as pymidi_protocol

    # (pymidi logs a warning for each receiver feedback: it does not implement RS.)
    logging.getLogger("pymidi").setLevel(logging.ERROR)
    # Clock sync as pymidi's server sees it (it answers count 0 and notes count 2).
    syncs = []
    original = pymidi_protocol.DataProtocol.handle_timestamp

    def handle_timestamp(self, data, addr):
        syncs.append(packets.AppleMIDITimestampPacket.parse(data).count)
        original(self, data, addr)
    pymidi_protocol.DataProtocol.handle_timestamp = handle_timestamp

    class Handler(pymidi_server.Handler):
        def __init__(self):
            self.connected, self.disconnected = [], []

        def on_peer_connected(self, peer):
            self.connected.append(peer.name)

        def on_peer_disconnected(self, peer):
            self.disconnected.append(peer.name)

        def on_midi_commands(self, peer, command_list):
            pass

    # An invitation nobody answers (a port pair nothing listens on): given up after 10 tries.
    silent_port = free_port_pair()
    unanswered, unanswered_log, unanswered_file = start_live(
        pianola, font, work, "unanswered", ["--rtpmidi-connect", f"127.0.0.1:{silent_port}"])

    port = free_port_pair()
    server = pymidi_server.Server([("127.0.0.1", port)])
    handler = Handler()
    server.add_handler(handler)
    server._init_protocols()
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            server._loop_once(timeout=0.1)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    recording = os.path.join(work, "initiated.mid")
    process, reader, log = start_live(
        pianola, font, work, "initiator", ["--rtpmidi-connect", f"127.0.0.1:{port}", "--record", recording])
    seen = wait_for(r"network MIDI: connected: pymidi", reader)
    check("initiator: session opened to pymidi's server", "connected: pymidi (127.0.0.1:" in seen,
          seen.strip().splitlines()[-1:] or "no output")
    time.sleep(0.3)
    check("initiator: pymidi's server saw the invitations on both ports", handler.connected == ["Pianola"],
          f"{handler.connected}")
    check("initiator: clock sync started and completed (count 0, then 2)", syncs[:2] == [0, 2], f"{syncs}")

    # The peer plays: packets from its data port, with its SSRC (the control port's, as Apple's give).
    control_protocol, data_protocol = server.ipv4_protocols
    pianola_data = next(iter(data_protocol.peers_by_ssrc.values())).addr if data_protocol.peers_by_ssrc else None
    sequence = random.getrandbits(16)
    sent = [bytes([0x90, 60, 100]), bytes([0xB0, 64, 127]), bytes([0x80, 60, 0]), bytes([0xB0, 64, 0])]
    for midi in sent:
        sequence = (sequence + 1) & 0xFFFF
        if pianola_data:
            data_protocol.socket.sendto(rtp_midi_packet(sequence, control_protocol.ssrc, midi), pianola_data)
        time.sleep(0.05)
    time.sleep(0.3)

    # Another pianola as the listener: the session both ways; and one that refuses.
    listen_port = free_port_pair()
    listener, listener_reader, listener_log = start_live(
        pianola, font, work, "listener", ["--rtpmidi", f"127.0.0.1:{listen_port}", "--no-mdns"])
    seen = wait_for(r"network sessions on", listener_reader)
    check("initiator: the listening pianola listens", "network sessions on" in seen, seen.strip())
    refusing_port = free_port_pair()
    refusing, refusing_reader, refusing_log = start_live(
        pianola, font, work, "refusing", ["--rtpmidi", f"127.0.0.1:{refusing_port}", "--rtpmidi-allow", "192.0.2.1", "--no-mdns"])
    seen = wait_for(r"network sessions on", refusing_reader)
    check("initiator: the refusing pianola listens", "network sessions on" in seen, seen.strip())
    guest, guest_reader, guest_log = start_live(
        pianola, font, work, "guest", ["--rtpmidi-connect", f"127.0.0.1:{listen_port}",
                                       "--rtpmidi-connect", f"127.0.0.1:{refusing_port}"])
    seen = wait_for(r"refused by", guest_reader)
    if "connected: Pianola" not in seen:  # (the two answers may come in either order)
        seen += wait_for(r"connected: Pianola", guest_reader, timeout=5)
    check("initiator: pianola to pianola, the session opens", "connected: Pianola (127.0.0.1:" in seen, seen.strip())
    check("initiator: a refused invitation is reported", f"refused by 127.0.0.1:{refusing_port}" in seen, seen.strip())
    seen = wait_for(r"connected: Pianola", listener_reader, timeout=5)
    check("initiator: the listening pianola sees the session", "connected: Pianola" in seen, seen.strip())

    for other in (guest, listener, refusing):
        other.terminate()
    process.terminate()
    status = process.wait(timeout=20)
    time.sleep(0.5)
    check("initiator: stops cleanly, and says BY (pymidi's server ends the session)",
          status == 0 and handler.disconnected == ["Pianola"], f"status {status}, ended {handler.disconnected}")
    stop.set()
    thread.join()
    for other in (guest, listener, refusing):
        other.wait(timeout=20)
    recorded = [message for _, message in read_smf_messages(recording)] if os.path.exists(recording) else []
    check("initiator: what the peer played was played and recorded", recorded == sent,
          f"{[m.hex() for m in recorded]}")

    seen = wait_for(r"no answer from", unanswered_log, timeout=15)
    check("initiator: an invitation nobody answers is given up", f"no answer from 127.0.0.1:{silent_port}" in seen,
          seen.strip().splitlines()[-1:] or "nothing")
    unanswered.terminate()
    check("initiator: still runs after giving up, stops cleanly", unanswered.wait(timeout=20) == 0, "")
    for file in (log, listener_log, refusing_log, guest_log, unanswered_file):
        file.close()
    pymidi_protocol.DataProtocol.handle_timestamp = original


if __name__ == "__main__":
    sys.exit(main())
