import Testing

@testable import AudioGraph

@Suite("EarliestAccounts")
struct EarliestAccountsTests {
    @Test("late accounts are passed over; the line follows a drift; old ones leave after 32; start-over forgets")
    func earliestOfTheLast32() {
        var accounts = EarliestAccounts()
        #expect(accounts.earliest == nil)
        // On time at 1000, then late by up to 3 ms (a busy machine): the line stays on time.
        accounts.add(1_000)
        for late in [2_000_000.0, 500_000, 3_000_000, 40] { accounts.add(1_000 + late) }
        #expect(accounts.earliest == 1_000 && accounts.count == 5)
        // An earlier account moves the line at once (the device's clock runs fast against ours).
        accounts.add(900)
        #expect(accounts.earliest == 900)
        // 32 accounts later, each later than 900, the 900 has left the window.
        for index in 0..<EarliestAccounts.window { accounts.add(5_000 + Double(index)) }
        #expect(accounts.earliest == 5_000 && accounts.count == 38)
        accounts.add(4_999)
        #expect(accounts.earliest == 4_999)
        accounts.startOver()
        #expect(accounts.earliest == nil && accounts.count == 0)
        // After a start-over, only the new accounts count, however early the old ones were.
        accounts.add(7_000)
        accounts.add(8_000)
        #expect(accounts.earliest == 7_000)
    }
}
