// Response serializers shared by every route whose response schema is the same. Fastify compiles a
// fast-json-stringify serializer per route and status, and each holds its own generated code and
// schema validator; with every route documenting the same error shapes for its error statuses,
// that was about 1,900 serializers, most of them copies, and over 100 MB of heap at start. Compiled
// once per distinct schema instead, a route's serializers are what they were, shared.
//
// And each is compiled when a response first uses it, not at start: most of the service's ~450
// distinct response shapes (error statuses of rarely used routes) are never sent by a given
// process, and their generated code was a third of its heap at rest (54 → 38 MB).
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';

export const sharedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  const compiled = new Map<string, Serializer>();
  return (route) => {
    // Keyed by the schema's JSON: TypeBox builds equal schemas as distinct objects.
    const key = JSON.stringify(route.schema);
    let serialize = compiled.get(key);
    if (!serialize) {
      let real: Serializer | undefined;
      serialize = (data) => (real ??= compile(route))(data);
      compiled.set(key, serialize);
    }
    return serialize;
  };
};
