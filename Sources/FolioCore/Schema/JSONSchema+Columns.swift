extension JSONSchema {
  /// The types the schema lets a document's top-level property `name`
  /// hold, and the subschema that decides it (`todos.schema.json#/properties/views`):
  /// what `folio.yaml` checks a counter or set column against.
  ///
  /// It reads `properties`, `additionalProperties`, `type`, `const`,
  /// `enum`, `$ref`, `anyOf` and `oneOf`; other keywords narrow the values
  /// of a type but never rule a type out, so they are not read.
  public func allowedTypes(ofProperty name: String) -> (types: Types, location: String) {
    let types = propertyTypes(0, name)
    let node = nodes[0].properties[name] ?? nodes[0].additionalProperties ?? 0
    return (types, fileName + nodes[node].pointer.fragment)
  }

  private func propertyTypes(_ index: Int, _ name: String) -> Types {
    let node = nodes[index]
    if let always = node.always { return always ? .all : [] }
    var types = Types.all
    if let child = node.properties[name] {
      types.formIntersection(valueTypes(child))
    } else if let other = node.additionalProperties {
      types.formIntersection(valueTypes(other))
    }
    if let target = node.ref { types.formIntersection(propertyTypes(target, name)) }
    for choices in [node.anyOf, node.oneOf].compactMap({ $0 }) {
      types.formIntersection(choices.reduce(Types()) { $0.union(propertyTypes($1, name)) })
    }
    return types
  }

  private func valueTypes(_ index: Int) -> Types {
    let node = nodes[index]
    if let always = node.always { return always ? .all : [] }
    var types = node.types ?? .all
    if let constValue = node.constValue { types.formIntersection(Types.of(constValue)) }
    if let values = node.enumValues {
      types.formIntersection(values.reduce(Types()) { $0.union(Types.of($1)) })
    }
    if let target = node.ref { types.formIntersection(valueTypes(target)) }
    for choices in [node.anyOf, node.oneOf].compactMap({ $0 }) {
      types.formIntersection(choices.reduce(Types()) { $0.union(valueTypes($1)) })
    }
    return types
  }
}
