//! Problems (registry-build errors) and warnings, each with the capability id
//! and the field path it is about, so one aggregate error can list them all.

use std::fmt;

/// What is wrong with a declaration. Stable codes: vectors and bindings
/// compare problems by `(capability, path, code)`, never by message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProblemCode {
    /// A required field is absent (or an empty string where text is required).
    MissingField,
    /// A field has the wrong JSON type.
    WrongType,
    /// A field this version does not know.
    UnknownField,
    /// A key of `expose` that is not one of the five surfaces.
    UnknownSurface,
    /// An enum field (`sideEffect`, `risk`, `discovery`, …) with an unknown value.
    UnknownValue,
    /// `timeoutMs`, `expiresInMs` (or a default) is zero or negative.
    NonPositive,
    /// A number outside its documented range (`maxAttempts < 0`, too large…).
    OutOfRange,
    /// Retry declared on write/destructive/external without `idempotent: true`.
    RetryNotIdempotent,
    /// Two capabilities map to the same tool name on one adapter, or a tool
    /// name equals another capability's id.
    ToolNameCollision,
    /// A tool name the adapter's protocol rejects.
    ToolNameInvalid,
    /// A capability id that is empty or holds characters ids may not hold.
    InvalidId,
    /// The same capability id declared twice.
    DuplicateId,
    /// A policy's argument predicate that does not parse.
    InvalidPredicate,
    /// A Cedar policy text that does not parse (the message names the line
    /// and column).
    InvalidPolicy,
    /// Two fields that cannot appear together.
    ConflictingFields,
    /// A host hook the metadata declares (`redact.output: true`,
    /// `retry.retryOn: true`, a `{"host": true}` policy) that the binding
    /// was not given an implementation for.
    MissingHook,
}

impl ProblemCode {
    pub const ALL: [ProblemCode; 16] = [
        ProblemCode::MissingField,
        ProblemCode::WrongType,
        ProblemCode::UnknownField,
        ProblemCode::UnknownSurface,
        ProblemCode::UnknownValue,
        ProblemCode::NonPositive,
        ProblemCode::OutOfRange,
        ProblemCode::RetryNotIdempotent,
        ProblemCode::ToolNameCollision,
        ProblemCode::ToolNameInvalid,
        ProblemCode::InvalidId,
        ProblemCode::DuplicateId,
        ProblemCode::InvalidPredicate,
        ProblemCode::InvalidPolicy,
        ProblemCode::ConflictingFields,
        ProblemCode::MissingHook,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ProblemCode::MissingField => "MISSING_FIELD",
            ProblemCode::WrongType => "WRONG_TYPE",
            ProblemCode::UnknownField => "UNKNOWN_FIELD",
            ProblemCode::UnknownSurface => "UNKNOWN_SURFACE",
            ProblemCode::UnknownValue => "UNKNOWN_VALUE",
            ProblemCode::NonPositive => "NON_POSITIVE",
            ProblemCode::OutOfRange => "OUT_OF_RANGE",
            ProblemCode::RetryNotIdempotent => "RETRY_NOT_IDEMPOTENT",
            ProblemCode::ToolNameCollision => "TOOL_NAME_COLLISION",
            ProblemCode::ToolNameInvalid => "TOOL_NAME_INVALID",
            ProblemCode::InvalidId => "INVALID_ID",
            ProblemCode::DuplicateId => "DUPLICATE_ID",
            ProblemCode::InvalidPredicate => "INVALID_PREDICATE",
            ProblemCode::InvalidPolicy => "INVALID_POLICY",
            ProblemCode::ConflictingFields => "CONFLICTING_FIELDS",
            ProblemCode::MissingHook => "MISSING_HOOK",
        }
    }
}

/// Something legal but probably not what the author meant; `inspect()`
/// reports these, the registry still builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WarningCode {
    /// `expose: {}` (or only `false` entries): defined, reachable nowhere.
    ExposeEmpty,
    /// Description longer than 300 characters: prompt real estate.
    DescriptionTooLong,
    /// write/destructive/external with neither an approval gate nor a policy
    /// that can apply to it.
    UnguardedSideEffect,
    /// A retry config the runtime will never act on.
    RetryIneligible,
    /// An `adapters.mcp.annotations` hint that contradicts the metadata
    /// (e.g. `readOnlyHint: true` on a write).
    AnnotationContradicts,
}

impl WarningCode {
    pub const ALL: [WarningCode; 5] = [
        WarningCode::ExposeEmpty,
        WarningCode::DescriptionTooLong,
        WarningCode::UnguardedSideEffect,
        WarningCode::RetryIneligible,
        WarningCode::AnnotationContradicts,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            WarningCode::ExposeEmpty => "EXPOSE_EMPTY",
            WarningCode::DescriptionTooLong => "DESCRIPTION_TOO_LONG",
            WarningCode::UnguardedSideEffect => "UNGUARDED_SIDE_EFFECT",
            WarningCode::RetryIneligible => "RETRY_INELIGIBLE",
            WarningCode::AnnotationContradicts => "ANNOTATION_CONTRADICTS",
        }
    }
}

/// One registry-build problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The capability it is about; `None` for runtime options.
    pub capability: Option<String>,
    /// Dotted field path, with `[i]` for array items: `retry.maxAttempts`.
    pub path: String,
    pub code: ProblemCode,
    pub message: String,
}

/// One inspect warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub path: String,
    pub code: WarningCode,
    pub message: String,
}

impl Problem {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "capability": self.capability,
            "path": self.path,
            "code": self.code.as_str(),
            "message": self.message,
        })
    }
}

impl Warning {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "code": self.code.as_str(),
            "message": self.message,
        })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.capability {
            Some(id) => write!(f, "{id}: ")?,
            None => f.write_str("options: ")?,
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{} [{}]", self.message, self.code.as_str())
    }
}

/// The one aggregate error a registry build fails with: every problem found,
/// never only the first (SI-4).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct RegistryError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "invalid capability metadata: {n} problem{}",
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

/// Collects problems while reading one capability (or the options).
pub(crate) struct Problems<'a> {
    pub capability: Option<&'a str>,
    pub list: &'a mut Vec<Problem>,
}

impl Problems<'_> {
    /// Records a problem. `path` is only rendered here, on the error path,
    /// so reading a valid declaration allocates no path strings.
    pub fn push(&mut self, path: impl fmt::Display, code: ProblemCode, message: impl Into<String>) {
        self.list.push(Problem {
            capability: self.capability.map(str::to_owned),
            path: path.to_string(),
            code,
            message: message.into(),
        });
    }
}

/// A field path rendered lazily: `prefix.field`, or `field` at the top.
#[derive(Clone, Copy)]
pub(crate) struct FieldPath<'a>(pub &'a str, pub &'a str);

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str(self.1)
        } else {
            write!(f, "{}.{}", self.0, self.1)
        }
    }
}
