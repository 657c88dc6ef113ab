/**
 * ClinicalTrials.gov country names → the names of the `world-atlas` map's shapes, where they differ.
 * A country missing here and from the map is still in the chart's table view, just not on the map.
 */
const TO_MAP: Readonly<Record<string, string>> = {
  "United States": "United States of America",
  "Korea, Republic of": "South Korea",
  "Korea, Democratic People's Republic of": "North Korea",
  "Russian Federation": "Russia",
  "Iran, Islamic Republic of": "Iran",
  "Czech Republic": "Czechia",
  "Viet Nam": "Vietnam",
  "Lao People's Democratic Republic": "Laos",
  "Syrian Arab Republic": "Syria",
  "Moldova, Republic of": "Moldova",
  "Tanzania, United Republic of": "Tanzania",
  "Congo, The Democratic Republic of the": "Dem. Rep. Congo",
  "Congo, Democratic Republic of the": "Dem. Rep. Congo",
  "Dominican Republic": "Dominican Rep.",
  "Central African Republic": "Central African Rep.",
  "Bosnia and Herzegovina": "Bosnia and Herz.",
  "North Macedonia": "Macedonia",
  "Macedonia, The Former Yugoslav Republic of": "Macedonia",
  "Côte D'Ivoire": "Côte d'Ivoire",
  "Cote D'Ivoire": "Côte d'Ivoire",
  "Equatorial Guinea": "Eq. Guinea",
  "South Sudan": "S. Sudan",
  Eswatini: "eSwatini",
  Swaziland: "eSwatini",
  "Palestinian Territory, occupied": "Palestine",
  "Libyan Arab Jamahiriya": "Libya",
  "Solomon Islands": "Solomon Is.",
  "Falkland Islands (Malvinas)": "Falkland Is.",
  "Western Sahara": "W. Sahara",
  Turkey: "Turkey",
  Türkiye: "Turkey",
};

export function mapCountryName(ctgovName: string): string {
  return TO_MAP[ctgovName] ?? ctgovName;
}
