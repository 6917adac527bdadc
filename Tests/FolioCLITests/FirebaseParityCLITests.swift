import Folio
import FolioTestSupport
import Foundation
import Testing

/// The smaller points where `folio serve` answers as Firebase's REST API
/// does, each with curl: priorities in bodies, shallow reads of arrays,
/// `access_token`, and the query values Firebase refuses.
struct FirebaseParityCLITests {
  @Test func prioritiesInBodiesAreTakenAndDropped() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/p1.json"
    let put = try ServeCLITests.curl(
      "PUT", url, body: #"{"title": {".value": "t", ".priority": 2}, "n": 1, ".priority": 5}"#)
    #expect(put.status == 200, "\(put.body)")
    #expect(try ServeCLITests.curl("GET", server.base + "/todos/p1/title.json").body == #""t""#)
    #expect(scratch.read("data/todos/p1.json")?.contains("priority") == false)
    let patch = try ServeCLITests.curl("PATCH", url, body: #"{"n": {".value": 2}}"#)
    #expect(patch.status == 200 && patch.body == #"{"n":2}"#, "\(patch.body)")
    let bad = try ServeCLITests.curl("PUT", url, body: #"{".value": 1, "x": 2}"#)
    #expect(bad.status == 400 && bad.body.contains(".value must be the only child besides .priority"))
  }

  @Test func shallowReadsOfArraysAndRefusedQueryValues() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    #expect(
      try ServeCLITests.curl("PUT", server.base + "/todos/k3.json", body: #"{"tags":["x","y"]}"#).status
        == 200)
    let shallow = try ServeCLITests.curl("GET", server.base + "/todos/k3/tags.json?shallow=true")
    #expect(shallow.body == #"{"0":true,"1":true}"#)
    for (query, words) in [
      (#"orderBy="$key"&startAt={"a":1}"#, "must be a JSON primitive"),
      (#"orderBy="$key"&endAt={"a":1}"#, "must be a JSON primitive"),
      (#"orderBy="title"&equalTo=["a"]"#, "must be a JSON primitive"),
      (#"orderBy="title"&startAt="a"&startKey="k/1""#, "must be a key, not a path"),
    ] {
      for path in ["/todos.json", "/todos/k3/tags.json"] {
        let reply = try ServeCLITests.curl("GET", server.base + path + "?" + query)
        #expect(reply.status == 400, "\(path)?\(query): \(reply.status) \(reply.body)")
        #expect(reply.body.contains(words), "\(path)?\(query): \(reply.body)")
      }
    }
  }

  @Test func accessTokenIsACredentialToo() throws {
    try ServeOptionsCLITests.servingWithTokenFile { (_: CLIScratch, server: ServeCLITests.Server) throws in
      #expect(try ServeCLITests.curl("GET", server.base + "/todos/k1.json").status == 401)
      #expect(try ServeCLITests.curl("GET", server.base + "/todos/k1.json?access_token=first").status == 200)
      #expect(try ServeCLITests.curl("GET", server.base + "/todos/k1.json?access_token=wrong").status == 401)
    }
  }
}
