/** Completed years between a `YYYY-MM-DD` birth date and a moment (UTC calendar), as scoring and templates see it. */
export const ageOn = (birthDate: string, at: Date): number => {
  const [year, month, day] = birthDate.split('-').map(Number)
  if (year === undefined || month === undefined || day === undefined) throw new Error(`not a date: ${birthDate}`)
  const thisYear = at.getUTCFullYear()
  const birthdayPassed = at.getUTCMonth() + 1 > month || (at.getUTCMonth() + 1 === month && at.getUTCDate() >= day)
  return thisYear - year - (birthdayPassed ? 0 : 1)
}
