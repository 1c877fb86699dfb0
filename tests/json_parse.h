// SPDX-License-Identifier: MIT
// A small JSON reader for tests (RFC 8259: objects, arrays, strings with
// escapes, numbers, true/false/null), so a test can look at what a JSON
// report holds rather than search its text. Throws std::runtime_error with
// the offset on malformed input.
#ifndef TESTS_JSON_PARSE_H
#define TESTS_JSON_PARSE_H

#include <cctype>
#include <cstring>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace json {

struct Value {
	enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
	bool b = false;
	double num = 0;
	std::string str;
	std::vector<Value> arr;
	std::vector<std::pair<std::string, Value>> obj; // in file order

	bool has(const std::string &key) const { return find(key) != nullptr; }
	const Value *find(const std::string &key) const
	{
		for (const auto &kv : obj)
			if (kv.first == key)
				return &kv.second;
		return nullptr;
	}
	const Value &operator[](const std::string &key) const
	{
		const Value *v = find(key);
		if (!v)
			throw std::runtime_error("no key '" + key + "'");
		return *v;
	}
};

class Parser {
public:
	explicit Parser(const std::string &text) : s_(text) {}

	Value document()
	{
		Value v = value();
		ws();
		if (i_ != s_.size())
			fail("trailing bytes");
		return v;
	}

private:
	const std::string &s_;
	size_t i_ = 0;

	[[noreturn]] void fail(const char *what)
	{
		throw std::runtime_error(std::string(what) + " at offset " + std::to_string(i_));
	}
	void ws()
	{
		while (i_ < s_.size() && strchr(" \t\r\n", s_[i_]))
			i_++;
	}
	void expect(char c)
	{
		ws();
		if (i_ >= s_.size() || s_[i_] != c)
			fail("unexpected byte");
		i_++;
	}
	bool literal(const char *word)
	{
		size_t n = strlen(word);
		if (s_.compare(i_, n, word) != 0)
			return false;
		i_ += n;
		return true;
	}
	std::string string()
	{
		std::string out;
		expect('"');
		for (;;) {
			if (i_ >= s_.size())
				fail("unterminated string");
			unsigned char c = (unsigned char)s_[i_++];
			if (c == '"')
				return out;
			if (c < 0x20)
				fail("control byte in string");
			if (c != '\\') {
				out += (char)c;
				continue;
			}
			if (i_ >= s_.size())
				fail("unterminated escape");
			char e = s_[i_++];
			switch (e) {
			case '"': case '\\': case '/': out += e; break;
			case 'b': out += '\b'; break;
			case 'f': out += '\f'; break;
			case 'n': out += '\n'; break;
			case 'r': out += '\r'; break;
			case 't': out += '\t'; break;
			case 'u': {
				if (i_ + 4 > s_.size())
					fail("short \\u escape");
				unsigned long cp = strtoul(s_.substr(i_, 4).c_str(), nullptr, 16);
				i_ += 4;
				out += cp < 0x80 ? (char)cp : '?'; // tests need ASCII only
				break;
			}
			default:
				fail("bad escape");
			}
		}
	}
	Value value()
	{
		Value v;
		ws();
		if (i_ >= s_.size())
			fail("unexpected end");
		char c = s_[i_];
		if (c == '{') {
			v.kind = Value::Object;
			i_++;
			ws();
			if (i_ < s_.size() && s_[i_] == '}') {
				i_++;
				return v;
			}
			for (;;) {
				std::string k = string();
				expect(':');
				v.obj.emplace_back(k, value());
				ws();
				if (i_ < s_.size() && s_[i_] == ',') {
					i_++;
					continue;
				}
				expect('}');
				return v;
			}
		}
		if (c == '[') {
			v.kind = Value::Array;
			i_++;
			ws();
			if (i_ < s_.size() && s_[i_] == ']') {
				i_++;
				return v;
			}
			for (;;) {
				v.arr.push_back(value());
				ws();
				if (i_ < s_.size() && s_[i_] == ',') {
					i_++;
					continue;
				}
				expect(']');
				return v;
			}
		}
		if (c == '"') {
			v.kind = Value::String;
			v.str = string();
			return v;
		}
		if (literal("true") || literal("false")) {
			v.kind = Value::Bool;
			v.b = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u';
			return v;
		}
		if (literal("null"))
			return v;
		// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
		size_t start = i_;
		if (s_[i_] == '-')
			i_++;
		if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_]))
			fail("bad value");
		if (s_[i_] == '0' && i_ + 1 < s_.size() && isdigit((unsigned char)s_[i_ + 1]))
			fail("leading zero");
		while (i_ < s_.size() && isdigit((unsigned char)s_[i_]))
			i_++;
		if (i_ < s_.size() && s_[i_] == '.') {
			i_++;
			if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_]))
				fail("bad fraction");
			while (i_ < s_.size() && isdigit((unsigned char)s_[i_]))
				i_++;
		}
		if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
			i_++;
			if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
				i_++;
			if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_]))
				fail("bad exponent");
			while (i_ < s_.size() && isdigit((unsigned char)s_[i_]))
				i_++;
		}
		v.kind = Value::Number;
		v.num = strtod(s_.substr(start, i_ - start).c_str(), nullptr);
		return v;
	}
};

inline Value parse(const std::string &text)
{
	return Parser(text).document();
}

} // namespace json

#endif // TESTS_JSON_PARSE_H
