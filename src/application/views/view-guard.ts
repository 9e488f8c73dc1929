/*
 * Compile-time checks that keep a shape written in two places in step (pure types: usable from any layer).
 * Each Swagger class (src/adapters/api/dto) `implements` the application view it documents, so a member the view
 * requires that the class lacks, or types apart, fails the typecheck. `implements` still lets a class leave out an
 * optional member, or add one of its own: each file also lists its classes beside their views with
 * `Holds<SameMembers<Class, View>>`, so a member named on one side only fails the typecheck too.
 */

/** true when the two types name the same members (their types are `implements`' to check). */
export type SameMembers<Dto, View> = [Exclude<keyof View, keyof Dto>, Exclude<keyof Dto, keyof View>] extends [
  never,
  never,
]
  ? true
  : false;

/**
 * Every member of `T` named, an optional one perhaps as undefined: a mapping written as one object literal of this
 * type fails the typecheck when `T` gains a member the mapping does not name (and stays assignable to `T`).
 */
export type EveryMember<T> = { [K in keyof Required<T>]: {} extends Pick<T, K> ? T[K] | undefined : T[K] };

/** Compiles only for `true`. */
export type Holds<T extends true> = T;
