package manifest

// SlowValidateInputJSON is ValidateInputJSON without the fast check: the
// full validator's answer, to compare with.
func SlowValidateInputJSON(s *ToolSchemas, data []byte) error {
	return s.validateJSON(s.input, data, "input", ErrInputSchema)
}

// FastCheckOn reports whether the input schema has a fast check.
func FastCheckOn(s *ToolSchemas) bool { return s.inFast.on }
