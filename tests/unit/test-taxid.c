/* Unit tests for taxid: the vectors of pix-facts.md, plus values computed
 * with an independent reference implementation. */
#include "pixrelay/pix/taxid.h"

#include "check.h"

#include <string.h>

#define SENTINEL "untouched!!!!!"

/* Normalise a CPF and return the result, or "FAIL" (checking that `out` was
 * left untouched on failure). */
static const char *cpf(const char *in)
{
	static char out[15];

	memcpy(out, SENTINEL, sizeof(out));
	if (taxid_cpf_normalize(in, out) != 0) {
		CHECK_STR(out, SENTINEL);
		return "FAIL";
	}
	return out;
}

static const char *cnpj(const char *in)
{
	static char out[15];

	memcpy(out, SENTINEL, sizeof(out));
	if (taxid_cnpj_normalize(in, out) != 0) {
		CHECK_STR(out, SENTINEL);
		return "FAIL";
	}
	return out;
}

static void test_cpf_vectors(void)
{
	/* pix-facts valid */
	CHECK_STR(cpf("52998224725"), "52998224725");
	CHECK_STR(cpf("39053344705"), "39053344705");
	CHECK_STR(cpf("11144477735"), "11144477735");
	CHECK_STR(cpf("29094848074"), "29094848074");
	/* more, from the reference implementation */
	CHECK_STR(cpf("65797543206"), "65797543206");
	CHECK_STR(cpf("31948757443"), "31948757443");
	CHECK_STR(cpf("91186252740"), "91186252740");
	/* pix-facts invalid */
	CHECK_STR(cpf("52998224724"), "FAIL");
	CHECK_STR(cpf("11111111111"), "FAIL");
	/* first check digit wrong, second right for the wrong first */
	CHECK_STR(cpf("52998224715"), "FAIL");
}

static void test_cpf_all_equal(void)
{
	char s[12];

	for (char c = '0'; c <= '9'; c++) {
		memset(s, c, 11);
		s[11] = '\0';
		CHECK_STR(cpf(s), "FAIL");
	}
	CHECK_STR(cpf("000.000.000-00"), "FAIL");
	CHECK_STR(cpf("999.999.999-99"), "FAIL");
}

/* Every single-digit change of a valid CPF is invalid (checked with the
 * reference implementation for this number). */
static void test_cpf_mutations(void)
{
	const char *base = "52998224725";
	char s[12];
	int accepted = 0;

	for (int i = 0; i < 11; i++) {
		for (char c = '0'; c <= '9'; c++) {
			if (c == base[i])
				continue;
			memcpy(s, base, 12);
			s[i] = c;
			if (strcmp(cpf(s), "FAIL") != 0) {
				accepted++;
				fprintf(stderr, "mutated CPF %s accepted\n", s);
			}
		}
	}
	CHECK_INT(accepted, 0);
}

static void test_cpf_forms(void)
{
	CHECK_STR(cpf("529.982.247-25"), "52998224725");
	CHECK_STR(cpf("390.533.447-05"), "39053344705");
	CHECK_STR(cpf("529.982.247-24"), "FAIL");
	/* lengths */
	CHECK_STR(cpf(""), "FAIL");
	CHECK_STR(cpf("5299822472"), "FAIL");
	CHECK_STR(cpf("529982247250"), "FAIL");
	CHECK_STR(cpf("0052998224725"), "FAIL");
	CHECK_STR(cpf("529.982.247-255"), "FAIL");
	CHECK_STR(cpf("29.982.247-25"), "FAIL");
	/* letters and other characters */
	CHECK_STR(cpf("5299822472A"), "FAIL");
	CHECK_STR(cpf("52998224a25"), "FAIL");
	CHECK_STR(cpf("A2998224725"), "FAIL");
	CHECK_STR(cpf("529.982.247-2A"), "FAIL");
	CHECK_STR(cpf("52998224725\n"), "FAIL");
	CHECK_STR(cpf(" 52998224725"), "FAIL");
	CHECK_STR(cpf("52998224725 "), "FAIL");
	CHECK_STR(cpf("529 982 247 25"), "FAIL");
	CHECK_STR(cpf("\xd9\xa5\x32\x39\x39\x38\x32\x32\x34\x37\x32"), "FAIL");
	/* misplaced, wrong or partial punctuation */
	CHECK_STR(cpf("5299.82.247-25"), "FAIL");
	CHECK_STR(cpf("529.982.24-725"), "FAIL");
	CHECK_STR(cpf("529.982.247.25"), "FAIL");
	CHECK_STR(cpf("529-982-247-25"), "FAIL");
	CHECK_STR(cpf("529,982,247-25"), "FAIL");
	CHECK_STR(cpf("529982247-25"), "FAIL");
	CHECK_STR(cpf("529.982.24725"), "FAIL");
	CHECK_STR(cpf("529.982247-25"), "FAIL");
	CHECK_STR(cpf(".52998224725"), "FAIL");
	CHECK_STR(cpf("52998224725-"), "FAIL");
	CHECK_STR(cpf("529..982.247-25"), "FAIL");
	CHECK_STR(cpf("529/982/247-25"), "FAIL");
	/* a CNPJ is not a CPF */
	CHECK_STR(cpf("11222333000181"), "FAIL");
	CHECK_INT(taxid_cpf_normalize(NULL, (char[12]){0}), -1);
}

static void test_cnpj_vectors(void)
{
	/* pix-facts valid */
	CHECK_STR(cnpj("11222333000181"), "11222333000181");
	CHECK_STR(cnpj("33000167000101"), "33000167000101");
	CHECK_STR(cnpj("12345678000195"), "12345678000195");
	CHECK_STR(cnpj("07549767000113"), "07549767000113");
	CHECK_STR(cnpj("12ABC34501DE35"), "12ABC34501DE35");
	CHECK_STR(cnpj("12abc34501de35"), "12ABC34501DE35");
	CHECK_STR(cnpj("12aBc34501dE35"), "12ABC34501DE35");
	/* alphanumeric ones from the reference implementation */
	CHECK_STR(cnpj("K9P34Y6N3WD268"), "K9P34Y6N3WD268");
	CHECK_STR(cnpj("5RQ4F5ZR37E361"), "5RQ4F5ZR37E361");
	CHECK_STR(cnpj("p3e2z8iq9y7j64"), "P3E2Z8IQ9Y7J64");
	CHECK_STR(cnpj("ZB6CN6Z43DVY04"), "ZB6CN6Z43DVY04");
	/* sum mod 11 == 1 gives a check digit of 0: for the first digit, then
	 * for the second */
	CHECK_STR(cnpj("48343526119505"), "48343526119505");
	CHECK_STR(cnpj("04661099069590"), "04661099069590");
	CHECK_STR(cnpj("LESA5LDSHE7205"), "LESA5LDSHE7205");
	CHECK_STR(cnpj("U4YRDVJ1TTPS80"), "U4YRDVJ1TTPS80");
	/* pix-facts invalid */
	CHECK_STR(cnpj("11222333000182"), "FAIL");
	CHECK_STR(cnpj("00000000000000"), "FAIL");
	CHECK_STR(cnpj("00.000.000/0000-00"), "FAIL");
	/* wrong check digits of valid bases */
	CHECK_STR(cnpj("11222333000191"), "FAIL");
	CHECK_STR(cnpj("12ABC34501DE36"), "FAIL");
	CHECK_STR(cnpj("12ABC34501DE25"), "FAIL");
	CHECK_STR(cnpj("ZB6CN6Z43DVY05"), "FAIL");
	/* a letter changed in the alphanumeric base */
	CHECK_STR(cnpj("12ABD34501DE35"), "FAIL");
	CHECK_STR(cnpj("12ABC34501DF35"), "FAIL");
}

/* Every single-digit change of these numeric CNPJs is invalid (checked with
 * the reference implementation). */
static void test_cnpj_mutations(void)
{
	static const char *const bases[] = {"11222333000181", "33000167000101", "12345678000195",
					    "07549767000113"};
	char s[15];
	int accepted = 0;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		for (int i = 0; i < 14; i++) {
			for (char c = '0'; c <= '9'; c++) {
				if (c == bases[b][i])
					continue;
				memcpy(s, bases[b], 15);
				s[i] = c;
				if (strcmp(cnpj(s), "FAIL") != 0) {
					accepted++;
					fprintf(stderr, "mutated CNPJ %s accepted\n", s);
				}
			}
		}
	}
	CHECK_INT(accepted, 0);
}

static void test_cnpj_forms(void)
{
	CHECK_STR(cnpj("11.222.333/0001-81"), "11222333000181");
	CHECK_STR(cnpj("07.549.767/0001-13"), "07549767000113");
	CHECK_STR(cnpj("12.ABC.345/01DE-35"), "12ABC34501DE35");
	CHECK_STR(cnpj("12.abc.345/01de-35"), "12ABC34501DE35");
	CHECK_STR(cnpj("11.222.333/0001-82"), "FAIL");
	/* letters where the check digits go */
	CHECK_STR(cnpj("12ABC34501DEA5"), "FAIL");
	CHECK_STR(cnpj("12ABC34501DE3A"), "FAIL");
	CHECK_STR(cnpj("1122233300018a"), "FAIL");
	CHECK_STR(cnpj("12.ABC.345/01DE-3A"), "FAIL");
	/* other characters */
	CHECK_STR(cnpj("11222333_00181"), "FAIL");
	CHECK_STR(cnpj("11222333 00181"), "FAIL");
	CHECK_STR(cnpj(" 11222333000181"), "FAIL");
	CHECK_STR(cnpj("11222333000181 "), "FAIL");
	CHECK_STR(cnpj("12\303\200BC34501DE35"), "FAIL");
	/* lengths */
	CHECK_STR(cnpj(""), "FAIL");
	CHECK_STR(cnpj("1122233300018"), "FAIL");
	CHECK_STR(cnpj("112223330001810"), "FAIL");
	CHECK_STR(cnpj("011222333000181"), "FAIL");
	CHECK_STR(cnpj("11.222.333/0001-811"), "FAIL");
	CHECK_STR(cnpj("1.222.333/0001-81"), "FAIL");
	/* misplaced, wrong or partial punctuation */
	CHECK_STR(cnpj("11.222.333/000181"), "FAIL");
	CHECK_STR(cnpj("11222333/0001-81"), "FAIL");
	CHECK_STR(cnpj("11.222.3330001-81"), "FAIL");
	CHECK_STR(cnpj("11.222.333.0001-81"), "FAIL");
	CHECK_STR(cnpj("11.222.333/0001.81"), "FAIL");
	CHECK_STR(cnpj("11-222-333/0001-81"), "FAIL");
	CHECK_STR(cnpj("112.223.330/001-81"), "FAIL");
	CHECK_STR(cnpj("11.222.333-0001/81"), "FAIL");
	CHECK_STR(cnpj("11.222.333\\0001-81"), "FAIL");
	/* a CPF is not a CNPJ */
	CHECK_STR(cnpj("52998224725"), "FAIL");
	CHECK_STR(cnpj("529.982.247-25"), "FAIL");
	CHECK_INT(taxid_cnpj_normalize(NULL, (char[15]){0}), -1);
}

static void test_either(void)
{
	static const char *const bad[] = {
	    "52998224724", "11111111111", "11222333000182", "00000000000000", "",
	    "abc",	   "5299822472",  "529.982.247-2",  "1234567800019",  NULL,
	};
	char out[15];
	enum taxid_kind kind;

	kind = 0;
	CHECK_INT(taxid_normalize("529.982.247-25", out, &kind), 0);
	CHECK_STR(out, "52998224725");
	CHECK_INT(kind, TAXID_CPF);

	kind = 0;
	CHECK_INT(taxid_normalize("29094848074", out, &kind), 0);
	CHECK_STR(out, "29094848074");
	CHECK_INT(kind, TAXID_CPF);

	kind = 0;
	CHECK_INT(taxid_normalize("11.222.333/0001-81", out, &kind), 0);
	CHECK_STR(out, "11222333000181");
	CHECK_INT(kind, TAXID_CNPJ);

	kind = 0;
	CHECK_INT(taxid_normalize("12abc34501de35", out, &kind), 0);
	CHECK_STR(out, "12ABC34501DE35");
	CHECK_INT(kind, TAXID_CNPJ);

	CHECK_INT(taxid_normalize("33000167000101", out, NULL), 0);
	CHECK_STR(out, "33000167000101");

	/* neither: nothing written */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(out, SENTINEL, sizeof(out));
		kind = 0;
		CHECK_INT(taxid_normalize(bad[i], out, &kind), -1);
		CHECK_STR(out, SENTINEL);
		CHECK_INT(kind, 0);
	}
}

int main(void)
{
	test_cpf_vectors();
	test_cpf_all_equal();
	test_cpf_mutations();
	test_cpf_forms();
	test_cnpj_vectors();
	test_cnpj_mutations();
	test_cnpj_forms();
	test_either();
	return check_finish("taxid");
}
