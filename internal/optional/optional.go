// Package optional reads and writes the optional fields of the wire types: a nil
// pointer is an absent field, and an absent list is answered as an empty one
// because the spec's arrays are never null. Each rule is written here once
// instead of as a small helper in every package that converts to or from api.
package optional

// Value is *p, or T's zero value when p is nil (an absent field).
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// String is an optional string or string enum as a plain string, "" when absent.
func String[T ~string](p *T) string {
	return string(Value(p))
}

// AsString is an optional string enum as an optional plain string (nil stays nil).
func AsString[T ~string](p *T) *string {
	if p == nil {
		return nil
	}
	s := string(*p)
	return &s
}

// Of is a pointer to a copy of v: a field that is present.
func Of[T any](v T) *T { return &v }

// NonZero is a pointer to v, or nil when v is T's zero value: the domain's empty
// string (or 0) is the wire's absent field.
func NonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// NonNil answers an absent list as an empty one, so it is encoded as [] and never null.
func NonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
