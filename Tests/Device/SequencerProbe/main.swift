// A probe of ALSASequencerInput's source reports for the device tests (Tests/Device/guest-tests.sh):
// it opens an input, asks for the sources named (waiting for those not there yet), starts it and
// prints each line of `takeEvents()` as it comes ("event: …"), then each source with its
// `failure` ("source: …"), all on standard output. The checks read what the library reported,
// not the CLI's wording.
//
//   sequencer-probe SECONDS SOURCE...
import MIDIIO

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 3, let seconds = Double(arguments[1]), seconds > 0 else {
    print("usage: sequencer-probe SECONDS SOURCE...")
    exit(2)
}
let input: ALSASequencerInput
do {
    input = try ALSASequencerInput(clientName: "Sequencer Probe")
} catch {
    print("sequencer-probe: \(error)")
    exit(1)
}
for source in arguments.dropFirst(2) {
    do { try input.connect(source, waitingForIt: true) } catch { print("connect: \(error)") }
}
input.start()

func report() {
    for event in input.takeEvents() { print("event: \(event)") }
    fflush(nil)  // (every stream: the checks read the output as it comes)
}

for _ in 0..<Int(seconds * 10) {
    report()
    usleep(100_000)
}
report()
for source in input.sources {
    print(
        "source: \(source.address) connected=\(source.isConnected) failure=\(source.failure ?? "none")"
            + " name=\(source.name)")
}
input.stop()
