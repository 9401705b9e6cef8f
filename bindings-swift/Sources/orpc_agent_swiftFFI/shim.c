// SwiftPM needs one source file in a C target; the target exists only to
// carry the uniffi header and module map (include/) and the link settings.
