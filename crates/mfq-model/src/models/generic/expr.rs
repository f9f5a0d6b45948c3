//! The expression language of generic models: the parsed (unresolved) syntax tree and its
//! parser, built on `winnow` (a Pratt parser for the operators).
//!
//! ```text
//! expr    := term (('+' | '-') term)*                       left-associative
//! term    := unary (('*' | '/') unary)*                     left-associative
//! unary   := ('-' | '+') unary | power
//! power   := operand (('^' | '**') unary)?                  right-associative: 2^3^2 = 2^9
//! operand := number | name | name '[' expr ']' | name '(' expr (',' expr)* ')'
//!          | 'sum' '(' name '=' expr '..' expr ',' expr ')' | '(' expr ')'
//! number  := digits ('.' digits)? (('e' | 'E') ('+' | '-')? digits)?
//! name    := (letter | '_') (letter | digit | '_')*
//! ```
//!
//! `-x^2` is `-(x^2)`. Ranges (`for = "k = 1..K"`, family ranges, sums) are inclusive.
//! Sums and products are kept n-ary so that a long flat sum is a shallow tree.

use std::ops::Range;

use winnow::ascii::multispace0;
use winnow::combinator::{alt, cut_err, delimited, expression, opt, preceded, separated, Infix, Prefix};
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::stream::{LocatingSlice, Location};
use winnow::token::{literal, one_of, take_while};
use winnow::{ModalResult, Parser};

/// Longest expression accepted, in bytes.
pub const MAX_LEN: usize = 10_000;
/// Deepest nesting of brackets accepted.
pub const MAX_NESTING: usize = 64;
/// Deepest syntax tree accepted (after flattening sums and products).
pub const MAX_DEPTH: usize = 200;

/// A parsed expression with the byte range of its source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: Kind,
    /// Byte range in the source string.
    pub span: Range<usize>,
}

/// The node kinds of a parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A number literal.
    Num(f64),
    /// A parameter, scalar variable or bound index.
    Name(String),
    /// An element of a family, `x[expr]`.
    Index(String, Box<Expr>),
    /// Negation.
    Neg(Box<Expr>),
    /// An n-ary sum; `true` marks a subtracted term.
    Sum(Vec<(bool, Expr)>),
    /// An n-ary product.
    Product(Vec<Expr>),
    /// `a / b`.
    Div(Box<Expr>, Box<Expr>),
    /// `a ^ b`.
    Pow(Box<Expr>, Box<Expr>),
    /// A function call `name(args)` (checked when the expression is resolved).
    Call(String, Vec<Expr>),
    /// `sum(index = from..to, body)`.
    SumOver {
        /// Name of the bound index.
        index: String,
        /// First value (inclusive).
        from: Box<Expr>,
        /// Last value (inclusive).
        to: Box<Expr>,
        /// The summand.
        body: Box<Expr>,
    },
}

/// An inclusive range `name = from..to` (the name is absent for family ranges).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeExpr {
    /// The bound index name and its byte range, for `k = a..b`.
    pub index: Option<(String, Range<usize>)>,
    /// First value.
    pub from: Expr,
    /// Last value.
    pub to: Expr,
}

/// A parse error: byte offset in the source and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// Byte offset of the error.
    pub offset: usize,
    /// What went wrong.
    pub message: String,
}

impl SyntaxError {
    /// 1-based column (in characters) of the error in `src`.
    pub fn column(&self, src: &str) -> usize {
        column(src, self.offset)
    }
}

/// 1-based column (in characters) of byte offset `offset` in `src`.
pub fn column(src: &str, offset: usize) -> usize {
    let mut off = offset.min(src.len());
    while !src.is_char_boundary(off) {
        off -= 1;
    }
    src[..off].chars().count() + 1
}

type In<'a> = LocatingSlice<&'a str>;

/// Parses a whole expression.
///
/// # Errors
/// A [`SyntaxError`] with the offset and what was expected.
pub fn parse_expr(src: &str) -> Result<Expr, SyntaxError> {
    prescan(src)?;
    let e = whole(src, |i: &mut In<'_>| delimited(multispace0, expr, multispace0).parse_next(i))?;
    check_depth(&e)?;
    Ok(e)
}

/// Parses `a..b` (a family range).
///
/// # Errors
/// A [`SyntaxError`] with the offset and what was expected.
pub fn parse_range(src: &str) -> Result<RangeExpr, SyntaxError> {
    prescan(src)?;
    let (from, to) = whole(src, |i: &mut In<'_>| delimited(multispace0, bounds, multispace0).parse_next(i))?;
    check_depth(&from)?;
    check_depth(&to)?;
    Ok(RangeExpr { index: None, from, to })
}

/// Parses `k = a..b` or a comma-separated list of them (`j = 1..2, k = 1..K`).
///
/// # Errors
/// A [`SyntaxError`] with the offset and what was expected.
pub fn parse_bindings(src: &str) -> Result<Vec<RangeExpr>, SyntaxError> {
    prescan(src)?;
    let list: Vec<RangeExpr> = whole(src, |i: &mut In<'_>| {
        delimited(multispace0, separated(1.., binding, (multispace0, ',', multispace0)), multispace0).parse_next(i)
    })?;
    for r in &list {
        check_depth(&r.from)?;
        check_depth(&r.to)?;
    }
    Ok(list)
}

fn whole<'a, O>(src: &'a str, mut p: impl FnMut(&mut In<'a>) -> ModalResult<O>) -> Result<O, SyntaxError> {
    let mut input = LocatingSlice::new(src);
    let out = match p(&mut input) {
        Ok(o) => o,
        Err(e) => {
            let offset = input.current_token_start();
            let inner = match e {
                ErrMode::Backtrack(c) | ErrMode::Cut(c) => c,
                ErrMode::Incomplete(_) => ContextError::new(),
            };
            return Err(SyntaxError { offset, message: describe(&inner, src, offset) });
        }
    };
    let offset = input.current_token_start();
    if offset < src.len() {
        let c = src[offset..].chars().next().unwrap_or(' ');
        let hint = match c {
            '*' => " (powers are written ^)",
            _ => "",
        };
        return Err(SyntaxError { offset, message: format!("unexpected '{c}'{hint}; expected an operator (+ - * / ^) or the end") });
    }
    Ok(out)
}

fn describe(e: &ContextError, src: &str, offset: usize) -> String {
    let mut expected: Vec<String> = e
        .context()
        .filter_map(|c| match c {
            StrContext::Expected(v) => Some(v.to_string()),
            _ => None,
        })
        .collect();
    expected.dedup();
    let found = src.get(offset..).and_then(|s| s.chars().next()).map_or_else(|| "the end".to_string(), |c| format!("'{c}'"));
    if expected.is_empty() {
        format!("unexpected {found}")
    } else {
        format!("expected {}, found {found}", expected.join(" or "))
    }
}

/// Rejects inputs whose parse would recurse deeply (the parser recurses on brackets,
/// prefix signs and powers): the length, the bracket nesting, runs of signs and the number
/// of powers are bounded.
fn prescan(src: &str) -> Result<(), SyntaxError> {
    if src.len() > MAX_LEN {
        return Err(SyntaxError { offset: MAX_LEN, message: format!("expression longer than {MAX_LEN} bytes") });
    }
    let (mut depth, mut signs, mut powers) = (0usize, 0usize, 0usize);
    for (i, c) in src.char_indices() {
        match c {
            '(' | '[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(SyntaxError { offset: i, message: format!("brackets nested deeper than {MAX_NESTING}") });
                }
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            '^' => {
                powers += 1;
                if powers > 256 {
                    return Err(SyntaxError { offset: i, message: "more than 256 powers in one expression".into() });
                }
            }
            _ => {}
        }
        match c {
            '+' | '-' => {
                signs += 1;
                if signs > 8 {
                    return Err(SyntaxError { offset: i, message: "more than 8 signs in a row".into() });
                }
            }
            c if c.is_whitespace() => {}
            _ => signs = 0,
        }
    }
    Ok(())
}

/// Depth of a parsed tree, by an explicit stack (no recursion on untrusted input).
fn check_depth(e: &Expr) -> Result<(), SyntaxError> {
    let mut stack = vec![(e, 1usize)];
    while let Some((e, d)) = stack.pop() {
        if d > MAX_DEPTH {
            return Err(SyntaxError { offset: e.span.start, message: format!("expression nested deeper than {MAX_DEPTH}") });
        }
        match &e.kind {
            Kind::Num(_) | Kind::Name(_) => {}
            Kind::Index(_, a) | Kind::Neg(a) => stack.push((a, d + 1)),
            Kind::Sum(t) => stack.extend(t.iter().map(|(_, a)| (a, d + 1))),
            Kind::Product(t) | Kind::Call(_, t) => stack.extend(t.iter().map(|a| (a, d + 1))),
            Kind::Div(a, b) | Kind::Pow(a, b) => stack.extend([(&**a, d + 1), (&**b, d + 1)]),
            Kind::SumOver { from, to, body, .. } => stack.extend([(&**from, d + 1), (&**to, d + 1), (&**body, d + 1)]),
        }
    }
    Ok(())
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn expr(i: &mut In<'_>) -> ModalResult<Expr> {
    expression(delimited(multispace0, operand, multispace0))
        .prefix(delimited(multispace0, one_of(['-', '+']), multispace0).map(|c| match c {
            '-' => Prefix(5, fold_neg),
            _ => Prefix(5, fold_plus),
        }))
        .infix(delimited(multispace0, alt((literal("**").value('^'), one_of(['+', '-', '*', '/', '^']))), multispace0).map(|c| match c {
            '+' => Infix::Left(1, fold_add),
            '-' => Infix::Left(1, fold_sub),
            '*' => Infix::Left(3, fold_mul),
            '/' => Infix::Left(3, fold_div),
            _ => Infix::Right(7, fold_pow),
        }))
        .parse_next(i)
}

fn join(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.min(b.start)..a.end.max(b.end)
}

fn fold_neg(_: &mut In<'_>, a: Expr) -> ModalResult<Expr> {
    let span = a.span.start.saturating_sub(1)..a.span.end;
    Ok(match a.kind {
        Kind::Num(v) => Expr { kind: Kind::Num(-v), span },
        _ => Expr { kind: Kind::Neg(Box::new(a)), span },
    })
}

fn fold_plus(_: &mut In<'_>, a: Expr) -> ModalResult<Expr> {
    Ok(a)
}

fn push_sum(a: Expr, b: Expr, minus: bool) -> Expr {
    let span = join(&a.span, &b.span);
    let mut terms = match a.kind {
        Kind::Sum(t) => t,
        _ => vec![(false, a)],
    };
    terms.push((minus, b));
    Expr { kind: Kind::Sum(terms), span }
}

fn fold_add(_: &mut In<'_>, a: Expr, b: Expr) -> ModalResult<Expr> {
    Ok(push_sum(a, b, false))
}

fn fold_sub(_: &mut In<'_>, a: Expr, b: Expr) -> ModalResult<Expr> {
    Ok(push_sum(a, b, true))
}

fn fold_mul(_: &mut In<'_>, a: Expr, b: Expr) -> ModalResult<Expr> {
    let span = join(&a.span, &b.span);
    let mut f = match a.kind {
        Kind::Product(f) => f,
        _ => vec![a],
    };
    f.push(b);
    Ok(Expr { kind: Kind::Product(f), span })
}

fn fold_div(_: &mut In<'_>, a: Expr, b: Expr) -> ModalResult<Expr> {
    let span = join(&a.span, &b.span);
    Ok(Expr { kind: Kind::Div(Box::new(a), Box::new(b)), span })
}

fn fold_pow(_: &mut In<'_>, a: Expr, b: Expr) -> ModalResult<Expr> {
    let span = join(&a.span, &b.span);
    Ok(Expr { kind: Kind::Pow(Box::new(a), Box::new(b)), span })
}

fn operand(i: &mut In<'_>) -> ModalResult<Expr> {
    alt((number, parens, named)).context(expected("a number, a name or '('")).parse_next(i)
}

fn number(i: &mut In<'_>) -> ModalResult<Expr> {
    let (text, span) = (
        take_while(1.., |c: char| c.is_ascii_digit()),
        opt(('.', take_while(1.., |c: char| c.is_ascii_digit()))),
        opt((one_of(['e', 'E']), opt(one_of(['+', '-'])), take_while(1.., |c: char| c.is_ascii_digit()))),
    )
        .take()
        .with_span()
        .parse_next(i)?;
    let v: f64 = text.parse().map_err(|_| ErrMode::Cut(ContextError::new()))?;
    Ok(Expr { kind: Kind::Num(v), span })
}

fn parens(i: &mut In<'_>) -> ModalResult<Expr> {
    let start = i.current_token_start();
    let mut e = preceded('(', cut_err(delimited(multispace0, expr, (multispace0, ')').context(expected("')'"))))).parse_next(i)?;
    e.span = start..i.previous_token_end();
    Ok(e)
}

/// A name: `(letter | _) (letter | digit | _)*`.
pub(crate) fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ident<'a>(i: &mut In<'a>) -> ModalResult<(&'a str, Range<usize>)> {
    (one_of(|c: char| c.is_ascii_alphabetic() || c == '_'), take_while(0.., |c: char| c.is_ascii_alphanumeric() || c == '_'))
        .take()
        .with_span()
        .parse_next(i)
}

fn named(i: &mut In<'_>) -> ModalResult<Expr> {
    let (name, span) = ident(i)?;
    let start = span.start;
    let after = (multispace0, opt(one_of(['(', '[']))).map(|(_, c)| c).parse_next(i)?;
    match after {
        Some('[') => {
            let idx = cut_err(delimited(multispace0, expr, (multispace0, ']').context(expected("']'")))).parse_next(i)?;
            let span = start..i.previous_token_end();
            Ok(Expr { kind: Kind::Index(name.to_string(), Box::new(idx)), span })
        }
        Some(_) if name == "sum" => {
            let (index, (from, to), _, body, _) = cut_err((
                delimited(multispace0, ident, multispace0).context(expected("an index name, as in sum(k = 1..K, x[k])")),
                preceded(('=', multispace0), bounds).context(expected("'= a..b'")),
                (multispace0, ',').context(expected("','")),
                delimited(multispace0, expr, multispace0),
                ')'.context(expected("')'")),
            ))
            .parse_next(i)?;
            let span = start..i.previous_token_end();
            let kind = Kind::SumOver { index: index.0.to_string(), from: Box::new(from), to: Box::new(to), body: Box::new(body) };
            Ok(Expr { kind, span })
        }
        Some(_) => {
            let args: Vec<Expr> = cut_err(separated(1.., delimited(multispace0, expr, multispace0), ',')).parse_next(i)?;
            cut_err(')'.context(expected("',' or ')'"))).parse_next(i)?;
            let span = start..i.previous_token_end();
            Ok(Expr { kind: Kind::Call(name.to_string(), args), span })
        }
        None => Ok(Expr { kind: Kind::Name(name.to_string()), span }),
    }
}

fn bounds(i: &mut In<'_>) -> ModalResult<(Expr, Expr)> {
    let from = expr(i)?;
    let _ = cut_err((multispace0, "..").context(expected("'..' (an inclusive range a..b)"))).parse_next(i)?;
    let to = cut_err(expr).parse_next(i)?;
    Ok((from, to))
}

fn binding(i: &mut In<'_>) -> ModalResult<RangeExpr> {
    let (name, span) = ident.context(expected("an index name, as in k = 1..K")).parse_next(i)?;
    let _ = cut_err((multispace0, '=', multispace0).context(expected("'='"))).parse_next(i)?;
    let (from, to) = cut_err(bounds).parse_next(i)?;
    Ok(RangeExpr { index: Some((name.to_string(), span)), from, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Expr) -> String {
        match &e.kind {
            Kind::Num(v) => format!("{v}"),
            Kind::Name(n) => n.clone(),
            Kind::Index(n, a) => format!("{n}[{}]", show(a)),
            Kind::Neg(a) => format!("(-{})", show(a)),
            Kind::Sum(t) => {
                let parts: Vec<String> = t.iter().map(|(m, a)| format!("{}{}", if *m { "-" } else { "+" }, show(a))).collect();
                format!("({})", parts.join(" "))
            }
            Kind::Product(f) => format!("({})", f.iter().map(show).collect::<Vec<_>>().join(" * ")),
            Kind::Div(a, b) => format!("({} / {})", show(a), show(b)),
            Kind::Pow(a, b) => format!("({} ^ {})", show(a), show(b)),
            Kind::Call(n, a) => format!("{n}({})", a.iter().map(show).collect::<Vec<_>>().join(", ")),
            Kind::SumOver { index, from, to, body } => format!("sum({index} = {}..{}, {})", show(from), show(to), show(body)),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let p = |s: &str| show(&parse_expr(s).unwrap());
        assert_eq!(p("1 + 2 * 3"), "(+1 +(2 * 3))");
        assert_eq!(p("-x^2"), "(-(x ^ 2))");
        assert_eq!(p("2^3^2"), "(2 ^ (3 ^ 2))");
        assert_eq!(p("2**-x"), "(2 ^ (-x))");
        assert_eq!(p("a - b - c"), "(+a -b -c)");
        assert_eq!(p("a / b / c"), "((a / b) / c)");
        assert_eq!(p("lambda*(x[k-1]^2 - x[k]^2)"), "(lambda * (+(x[(+k -1)] ^ 2) -(x[k] ^ 2)))");
        assert_eq!(p(" min( a , 1e-3 ) "), "min(a, 0.001)");
        assert_eq!(p("sum(j = 1..K, x[j])"), "sum(j = 1..K, x[j])");
        assert_eq!(p("-3"), "-3");
        assert_eq!(p("a*-b"), "(a * (-b))");
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_expr("x + * 2").unwrap_err();
        assert_eq!(e.column("x + * 2"), 5, "{e:?}");
        let e = parse_expr("(x + 2").unwrap_err();
        assert!(e.message.contains("')'"), "{e:?}");
        let e = parse_expr("x[1").unwrap_err();
        assert!(e.message.contains("']'"), "{e:?}");
        let e = parse_expr("x y").unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(parse_expr("").is_err());
        assert!(parse_expr(&"(".repeat(100)).is_err());
        assert!(parse_expr(&format!("{}x", "-".repeat(20))).is_err());
        assert!(parse_expr(&"x+".repeat(3000)).is_err());
        let long = format!("x{}", "+x".repeat(2000));
        assert!(parse_expr(&long).is_ok());
    }

    #[test]
    fn ranges_and_bindings() {
        let r = parse_range("1..K").unwrap();
        assert_eq!((show(&r.from), show(&r.to)), ("1".into(), "K".into()));
        let b = parse_bindings("j = 1..2, k = j..K+1").unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].index.as_ref().unwrap().0, "k");
        assert!(parse_bindings("k 1..K").is_err());
        assert!(parse_range("1.5..2").is_ok());
    }
}
