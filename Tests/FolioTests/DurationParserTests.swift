import Folio
import FolioSystem
import FolioTestSupport
import Testing

@Suite struct DurationParserTests {
  @Test(arguments: [
    (Duration.seconds(30), "30s"), (.seconds(5400), "1h30m"), (.seconds(86400), "24h"),
    (.milliseconds(1500), "1500ms"), (.seconds(3661), "1h1m1s"), (.zero, "0s"),
  ])
  func formatsAsPeopleWriteIt(duration: Duration, text: String) throws {
    #expect(DurationParser.format(duration) == text)
    if duration > .zero { #expect(try DurationParser.parse(text) == duration) }
  }

  @Test func formatDropsBelowAMillisecond() {
    #expect(DurationParser.format(.nanoseconds(2_000_000_123)) == "2s")
  }
}
